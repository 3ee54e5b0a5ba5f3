/**
 * Whose a turn, a conversation or a batch is. An owner is an identity (a `serve` token's name, an
 * OpenID provider's subject qualified by its issuer) seen two ways:
 * - its key: a hash of the qualified identity, the `McpTurnsOwner` search attribute and the
 *   fairness key of its work: opaque (search attributes are plain text even with encryption on),
 *   64 bytes at most (a fairness key's limit), and the same in every process;
 * - its label: how an admin reads it (the memo, encrypted with the payloads when encryption is on).
 *
 * Who sees what: an admin sees everything; anyone else only what carries their key. What was started
 * without an owner (the CLI, the client API) is seen by admins only.
 */
import { createHash } from 'node:crypto';
import type { SearchAttributePair, TypedSearchAttributes } from '@temporalio/common';
import { OWNER_MEMO, SA_OWNER } from '../core/search-attributes';
import { USAGE_SLOT_MEMO } from '../core/usage-ledger';
import { quoted } from './visibility-query';

export interface Owner {
  /** The opaque key: `o` and 32 characters of base64url SHA-256 of the qualified identity. */
  key: string;
  /** The identity as an admin reads it: `alice`, or `alice (https://id.example.com)` for a JWT's subject. */
  label: string;
}

/** Who looks: an admin, or the owner whose key narrows what is seen. */
export type Viewer = { admin: true } | { admin: false; ownerKey: string };

/**
 * The owner of `identity`, a qualified identity (`token:alice`, `jwt:<issuer>:<subject>`): two
 * identities differ as their qualified forms do, so a token named alice and a JWT whose subject is
 * alice are two owners.
 */
export function ownerOf(identity: string, label: string): Owner {
  return { key: `o${createHash('sha256').update(identity).digest('base64url').slice(0, 32)}`, label };
}

/** What a workflow started for `owner` carries: the key as a search attribute. */
export function ownerSearchAttributes(owner: Owner | undefined): SearchAttributePair[] {
  return owner ? [{ key: SA_OWNER, value: owner.key }] : [];
}

/** What a workflow started for `owner` carries in its memo: the label. */
export function ownerMemo(owner: Owner | undefined): Record<string, unknown> {
  return owner ? { [OWNER_MEMO]: owner.label } : {};
}

/**
 * The start options of a workflow started for `owner` (besides its search attribute): the memo
 * naming the owner (and the usage slot it holds), and the owner's key as its fairness key, so
 * Temporal dispatches its tasks (its activities inherit it) fairly among owners: one owner's
 * thousand turns do not hold back another's one.
 */
export function ownerStartOptions(owner: Owner | undefined, usageSlot?: string): { memo?: Record<string, unknown>; priority?: { fairnessKey: string } } {
  if (!owner) return usageSlot ? { memo: { [USAGE_SLOT_MEMO]: usageSlot } } : {};
  return { memo: { ...ownerMemo(owner), ...(usageSlot ? { [USAGE_SLOT_MEMO]: usageSlot } : {}) }, priority: { fairnessKey: owner.key } };
}

/** The label a workflow's memo names its owner by, if any. */
export function ownerLabelOf(memo: Record<string, unknown> | undefined): string | undefined {
  const label = memo?.[OWNER_MEMO];
  return typeof label === 'string' ? label : undefined;
}

/** Whether `viewer` may see a workflow with these search attributes. */
export function visibleTo(viewer: Viewer, attributes: TypedSearchAttributes): boolean {
  return viewer.admin || attributes.get(SA_OWNER) === viewer.ownerKey;
}

/** The visibility clause that keeps a list to what `viewer` may see (none for an admin). */
export function ownerClause(viewer: Viewer | undefined): string | undefined {
  return viewer && !viewer.admin ? `${SA_OWNER.name} = ${quoted(viewer.ownerKey)}` : undefined;
}
