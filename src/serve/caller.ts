/**
 * Who makes a request to `serve`: a static token's holder, an OpenID provider's subject (a JWT), or,
 * with no sign-in configured (a loopback bind), the one local user. Each is an owner
 * (src/client/owner.ts) qualified by how it signed in, so a token named `alice` and a JWT whose
 * subject is `alice` are two people. An admin sees and acts on everything; anyone else on what they
 * started through `serve`.
 */
import { ownerOf, type Owner, type Viewer } from '../client/owner';

export interface Caller {
  /** The name they act under: recorded as the approver, and the turn's `context.user`. */
  name: string;
  /** A JWT's issuer; absent for a static token and the local user. */
  issuer?: string;
  admin: boolean;
  owner: Owner;
}

/** Who acts without sign-in configured (a loopback bind): the one user, an admin. */
export const LOCAL_CALLER: Caller = { name: 'local user', admin: true, owner: ownerOf('local', 'local user') };

/** Whether `caller` signed in (a token or a JWT): the local user is whoever uses this machine. */
export function signedIn(caller: Caller): boolean {
  return caller.owner.key !== LOCAL_CALLER.owner.key;
}

/** The holder of the static token named `name`. */
export function tokenCaller(name: string, admin: boolean): Caller {
  return { name, admin, owner: ownerOf(`token:${name}`, name) };
}

/** The subject `name` of a JWT from `issuer`. */
export function jwtCaller(issuer: string, name: string, admin: boolean): Caller {
  return { name, issuer, admin, owner: ownerOf(`jwt:${issuer}:${name}`, `${name} (${issuer})`) };
}

/** How `caller` looks at workflows: everything as an admin, else what they own. */
export function viewerOf(caller: Caller): Viewer {
  return caller.admin ? { admin: true } : { admin: false, ownerKey: caller.owner.key };
}

/** Who a decision is recorded as made by: the caller's name, with the issuer of a JWT. */
export function approverOf(caller: Caller): string {
  return caller.owner.label;
}
