/**
 * A real OpenID provider on 127.0.0.1 for tests, as a relying party that verifies JWTs sees one:
 * its discovery document (`/.well-known/openid-configuration`, naming itself as `issuer` and its
 * `jwks_uri`) and its key set (`/jwks`: the public halves of its signing keys, each with `kid`, `alg`
 * and `use: sig`), served over HTTP, every request to each counted. It holds an RS256 key and an
 * ES256 key, can rotate to a new RS256 key (published beside the old ones), and mints JWTs with
 * them; a test can also have it sign what no honest provider would (expired, for another audience,
 * with a key it never published) and serve documents it should not (`overrides`).
 *
 * `jose` is an ES module: this CommonJS test code loads it with `import()`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as JoseModule from 'jose' with { 'resolution-mode': 'import' };
import type { CryptoKey, JWK, JWTPayload } from 'jose' with { 'resolution-mode': 'import' };

type Jose = typeof JoseModule;
const loadJose = (): Promise<Jose> => import('jose');

/** The audience its tokens name unless told otherwise. */
export const DEFAULT_AUDIENCE = 'mcp-turns';
/** The subject its tokens name unless told otherwise. */
export const DEFAULT_SUBJECT = 'alice';
/** How long its tokens live unless told otherwise. */
const TOKEN_LIFETIME_S = 5 * 60;

export type SigningAlgorithm = 'RS256' | 'ES256';

/** A key pair a JWT can be signed with, and its public half as published. */
export interface SigningKey {
  kid: string;
  alg: SigningAlgorithm;
  privateKey: CryptoKey;
  /** The public key as a JWK with `kid`, `alg` and `use: sig`. */
  publicJwk: JWK;
  /** The public key as SPKI PEM, the bytes an HMAC confusion attack uses as its secret. */
  publicPem: string;
}

/** The discovery document it serves. */
export interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
  [field: string]: unknown;
}

/** What it serves instead of its honest documents, while set. */
export interface IssuerOverrides {
  /** The discovery document served, made from the honest one. */
  discovery?: (honest: DiscoveryDocument) => unknown;
  /** The key set served, made from the honest one. */
  jwks?: (honest: { keys: JWK[] }) => unknown;
  /** The status `/jwks` answers with. */
  jwksStatus?: number;
}

export interface JwtSigningOptions {
  /** The algorithm in the header. @default the key's, else RS256 */
  alg?: SigningAlgorithm | 'HS256';
  /** The key that signs: one of its own, one it never published, or an HMAC secret. @default its current key for `alg` */
  key?: SigningKey | Uint8Array;
  /** The `kid` in the header; `null` leaves it out. @default the signing key's */
  kid?: string | null;
}

export interface OpenIdIssuer {
  /** `http://127.0.0.1:<port>`, the `iss` of its tokens. */
  url: string;
  port: number;
  /** `<url>/.well-known/openid-configuration` */
  discoveryUrl: string;
  /** `<url>/jwks` */
  jwksUrl: string;
  /** Requests served so far. */
  requests: { discovery: number; jwks: number };
  overrides: IssuerOverrides;
  /** The RS256 key it signs with now (the newest). */
  currentKey(): SigningKey;
  /** Its ES256 key. */
  ecKey: SigningKey;
  /** A new RS256 key, published in the key set beside the old ones, and signed with from now on. */
  rotate(): Promise<SigningKey>;
  /**
   * A JWT of `claims` over the defaults `iss` (its url), `aud` ({@link DEFAULT_AUDIENCE}), `sub`
   * ({@link DEFAULT_SUBJECT}), `iat` (now) and `exp` (now + 5 min): a claim given overrides its
   * default, and one given as `undefined` is left out.
   */
  sign(claims?: JWTPayload, options?: JwtSigningOptions): Promise<string>;
  close(): Promise<void>;
}

let keysMade = 0;

/** A new key pair for `alg`, published under `kid` (by default a fresh one) by whoever holds it. */
export async function generateSigningKey(alg: SigningAlgorithm, kid = `${alg.toLowerCase()}-${++keysMade}-${Date.now().toString(36)}`): Promise<SigningKey> {
  const { generateKeyPair, exportJWK, exportSPKI } = await loadJose();
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, publicPem: await exportSPKI(publicKey) };
}

/** Starts the issuer on `port` (by default a free one), e.g. the port of one that was closed. */
export async function startOpenIdIssuer({ port = 0 }: { port?: number } = {}): Promise<OpenIdIssuer> {
  const { SignJWT } = await loadJose();
  const rsaKeys = [await generateSigningKey('RS256')];
  const ecKey = await generateSigningKey('ES256');
  const requests = { discovery: 0, jwks: 0 };
  const overrides: IssuerOverrides = {};
  let url = '';

  const server = http.createServer((req, res) => {
    const answer = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const path = new URL(req.url ?? '/', url).pathname;
    if (req.method === 'GET' && path === '/.well-known/openid-configuration') {
      requests.discovery++;
      const honest: DiscoveryDocument = {
        issuer: url,
        jwks_uri: `${url}/jwks`,
        id_token_signing_alg_values_supported: ['RS256', 'ES256'],
        subject_types_supported: ['public'],
        response_types_supported: ['code'],
      };
      answer(200, overrides.discovery ? overrides.discovery(honest) : honest);
    } else if (req.method === 'GET' && path === '/jwks') {
      requests.jwks++;
      const honest = { keys: [...rsaKeys, ecKey].map((k) => k.publicJwk) };
      answer(overrides.jwksStatus ?? 200, overrides.jwks ? overrides.jwks(honest) : honest);
    } else {
      answer(404, { error: 'not_found' });
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const listening = (server.address() as AddressInfo).port;
  url = `http://127.0.0.1:${listening}`;
  const currentKey = (): SigningKey => rsaKeys[rsaKeys.length - 1]!;

  return {
    url,
    port: listening,
    discoveryUrl: `${url}/.well-known/openid-configuration`,
    jwksUrl: `${url}/jwks`,
    requests,
    overrides,
    currentKey,
    ecKey,
    async rotate() {
      rsaKeys.push(await generateSigningKey('RS256'));
      return currentKey();
    },
    async sign(claims = {}, options = {}) {
      const alg = options.alg ?? (options.key && !(options.key instanceof Uint8Array) ? options.key.alg : 'RS256');
      const key = options.key ?? (alg === 'ES256' ? ecKey : currentKey());
      const kid = options.kid === undefined ? (key instanceof Uint8Array ? undefined : key.kid) : (options.kid ?? undefined);
      const now = Math.floor(Date.now() / 1000);
      const payload: JWTPayload = { iss: url, aud: DEFAULT_AUDIENCE, sub: DEFAULT_SUBJECT, iat: now, exp: now + TOKEN_LIFETIME_S, ...claims };
      for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
      return new SignJWT(payload)
        .setProtectedHeader({ alg, typ: 'JWT', ...(kid !== undefined ? { kid } : {}) })
        .sign(key instanceof Uint8Array ? key : key.privateKey);
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
