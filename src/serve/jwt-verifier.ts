/**
 * Bearer JWTs from one OpenID provider, verified with `jose`:
 * - the keys are the issuer's: its discovery document (`<issuer>/.well-known/openid-configuration`,
 *   whose `issuer` must be the configured one) names its `jwks_uri` (https, or http on this machine),
 *   unless `jwksUrl` is given; the key set is cached, and fetched again when a token names a `kid`
 *   it lacks (at most every 5 s);
 * - the signature, `iss`, `aud` (one of the configured audiences), `exp` (required: a token
 *   without one never expires) and `nbf` (with the configured leeway) are checked, and only the configured asymmetric algorithms are accepted:
 *   `none` and HMAC never, so a public key can never serve as an HMAC secret;
 * - the caller is the identity claim (`sub` by default) qualified by the issuer; an admin when the
 *   admin claim is true, its value, or a list holding its value.
 *
 * `jose` is an ES module: this CommonJS build loads it with `import()` once, when the first JWT
 * comes. A provider that cannot be reached, or whose discovery document or key set cannot be used,
 * is {@link OpenIdUnavailable} (the request is answered 503, not 401: the token may be good);
 * discovery is tried again on the next request.
 */
import type * as JoseModule from 'jose' with { 'resolution-mode': 'import' };
import { oneLine } from '../core/text';
import { secureUrl, type JwtSettings } from '../config/serve-settings';
import { jwtCaller, type Caller } from './caller';

/** How long a request for the discovery document or the key set may take. */
const FETCH_TIMEOUT_MS = 5000;
/** A token naming an unknown `kid` fetches the key set again at most this often (a key rotated in is usable within it). */
const KEYS_COOLDOWN_MS = 5000;
/** The key set is fetched again after this long anyway. */
const KEYS_MAX_AGE_MS = 10 * 60_000;
/** The longest identity claim taken (it names an owner and is shown to admins). */
const MAX_IDENTITY_LENGTH = 256;

/** The provider's discovery document or keys could not be read: nobody can be verified just now. */
export class OpenIdUnavailable extends Error {
  override name = 'OpenIdUnavailable';
}

/** Whether `value` has the shape of a signed JWT (three base64url parts): only these are verified as JWTs. */
export function looksLikeJwt(value: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(value);
}

type Jose = typeof JoseModule;
let jose: Promise<Jose> | undefined;
function loadJose(): Promise<Jose> {
  return (jose ??= import('jose'));
}

export class JwtVerifier {
  private keys: Promise<JoseModule.JWTVerifyGetKey> | undefined;

  constructor(private readonly settings: JwtSettings) {}

  /** The caller `token` names, or the one line it is refused with. Throws {@link OpenIdUnavailable}. */
  async verify(token: string): Promise<{ caller: Caller } | { refusal: string }> {
    const { jwtVerify, errors } = await loadJose();
    const keys = await this.keySet();
    let payload: JoseModule.JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: this.settings.issuer,
        audience: this.settings.audience,
        algorithms: this.settings.algorithms,
        clockTolerance: this.settings.clockToleranceSeconds,
        requiredClaims: ['exp'],
      }));
    } catch (err) {
      const unreadableKeys =
        err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || (err instanceof errors.JOSEError && err.code === 'ERR_JOSE_GENERIC') || !(err instanceof errors.JOSEError);
      if (unreadableKeys) {
        throw new OpenIdUnavailable(`the keys of ${this.settings.issuer} could not be read: ${oneLine((err as Error).message, 200)}`);
      }
      return { refusal: `the JWT is refused: ${refusalOf(err, errors)}` };
    }
    const name = payload[this.settings.identityClaim];
    if (typeof name !== 'string' || !name || name.length > MAX_IDENTITY_LENGTH) {
      return { refusal: `the JWT is refused: its ${this.settings.identityClaim} claim is not a name (a string of 1-${MAX_IDENTITY_LENGTH} characters)` };
    }
    return { caller: jwtCaller(this.settings.issuer, name, this.isAdmin(payload)) };
  }

  private isAdmin(payload: JoseModule.JWTPayload): boolean {
    const rule = this.settings.adminClaim;
    if (!rule) return false;
    const value = payload[rule.claim];
    return value === true || value === rule.value || (Array.isArray(value) && value.includes(rule.value));
  }

  /** The issuer's key set, found once (discovery unless `jwksUrl`); a failed discovery is tried again next time. */
  private keySet(): Promise<JoseModule.JWTVerifyGetKey> {
    this.keys ??= this.discoverKeys().catch((err: unknown) => {
      this.keys = undefined;
      throw err;
    });
    return this.keys;
  }

  private async discoverKeys(): Promise<JoseModule.JWTVerifyGetKey> {
    const { createRemoteJWKSet } = await loadJose();
    const jwksUrl = this.settings.jwksUrl ?? (await this.jwksUriFromDiscovery());
    return createRemoteJWKSet(new URL(jwksUrl), { timeoutDuration: FETCH_TIMEOUT_MS, cooldownDuration: KEYS_COOLDOWN_MS, cacheMaxAge: KEYS_MAX_AGE_MS });
  }

  private async jwksUriFromDiscovery(): Promise<string> {
    const { issuer } = this.settings;
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let document: { issuer?: unknown; jwks_uri?: unknown };
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), redirect: 'error' });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const body: unknown = await response.json();
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not a JSON object');
      document = body;
    } catch (err) {
      throw new OpenIdUnavailable(`the discovery document ${url} could not be read: ${oneLine((err as Error).message, 200)}`);
    }
    if (document.issuer !== issuer) {
      throw new OpenIdUnavailable(`the discovery document ${url} names issuer ${oneLine(String(document.issuer), 100)}, not ${issuer}: serve.auth.jwt.issuer must be the issuer exactly`);
    }
    const jwksUri = document.jwks_uri;
    if (typeof jwksUri !== 'string') throw new OpenIdUnavailable(`the discovery document ${url} names no jwks_uri: set serve.auth.jwt.jwksUrl`);
    if (!URL.canParse(jwksUri)) throw new OpenIdUnavailable(`the discovery document ${url} names jwks_uri ${oneLine(jwksUri, 100)}, which is not a URL`);
    if (!secureUrl(jwksUri)) {
      throw new OpenIdUnavailable(`the discovery document ${url} names jwks_uri ${oneLine(jwksUri, 100)}, which must be https (http only on this machine): keys read over plain HTTP could be anyone's`);
    }
    return jwksUri;
  }
}

/** Why jose refused a token, in words a caller can act on. */
function refusalOf(err: Error, errors: Jose['errors']): string {
  if (err instanceof errors.JWTExpired) return 'it has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return 'it is for another audience';
    if (err.claim === 'iss') return 'it is from another issuer';
    if (err.claim === 'nbf') return 'it is not valid yet';
    if (err.claim === 'exp' && err.reason === 'missing') return 'it has no exp claim (a token must expire)';
    return `its ${err.claim} claim fails (${err.reason})`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return 'its algorithm is not allowed (asymmetric signatures only)';
  if (err instanceof errors.JWSSignatureVerificationFailed) return "its signature does not verify with the issuer's keys";
  if (err instanceof errors.JWKSNoMatchingKey) return "no key of the issuer's matches it";
  if (err instanceof errors.JWKSMultipleMatchingKeys) return 'it names no key id (kid) and the issuer has several keys that could have signed it';
  return oneLine(err.message, 200);
}
