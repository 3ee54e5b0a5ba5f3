/**
 * `serve`'s sign-in with OpenID JWTs against a real issuer over HTTP (test/support/openid-issuer.ts),
 * through the request guard in a bare Fastify app: a valid JWT names its subject qualified by the
 * issuer; every kind of bad JWT (expired, for another audience, from another issuer, not valid yet,
 * signed with a key the issuer never published, `alg: none`, HMAC keyed with the issuer's public
 * key) is a 401 with one line saying why; the discovery document is read once and the key set again
 * for a rotated key; the configured claims name the caller and decide admins; static tokens work
 * beside JWTs as other owners; an issuer that is down or whose documents cannot be used is a 503
 * naming what failed, and a down issuer is tried again on the next request.
 */
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { resolveServeSettings } from '../../src/config/serve-settings';
import { callerOfRequest, guardRequests } from '../../src/serve/request-guard';
import { DEFAULT_AUDIENCE, generateSigningKey, startOpenIdIssuer, type OpenIdIssuer } from '../support/openid-issuer';

jest.setTimeout(30_000);

const TOKEN = 'a-long-enough-token-1234';
/** How long the verifier waits after reading the key set before an unknown `kid` may read it again. */
const KEYS_COOLDOWN_MS = 5000;

let issuer: OpenIdIssuer;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  issuer = await startOpenIdIssuer();
});
afterEach(async () => {
  jest.restoreAllMocks();
  while (closers.length) await closers.pop()!();
});
afterAll(async () => {
  await issuer?.close();
});

/** What the guarded route answered: its status, body and `www-authenticate` header. */
interface Answer {
  status: number;
  body: unknown;
  wwwAuthenticate: string | null;
}

/** `serve.auth.jwt` for `of` (by default the shared issuer), with `fields` added. */
function jwtSection(fields: Record<string, unknown> = {}, of: OpenIdIssuer = issuer): Record<string, unknown> {
  return { issuer: of.url, audience: DEFAULT_AUDIENCE, ...fields };
}

/**
 * A bare app behind the guard with the `serve:` section `section`, listening on loopback, with one
 * closed route answering who the caller is; `who(bearer)` calls it with `Authorization: Bearer`.
 */
async function guardedApp(section: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<{ who(bearer?: string): Promise<Answer> }> {
  const settings = resolveServeSettings(section, {}, env);
  const app = Fastify();
  guardRequests(app, settings, () => (app.server.address() as AddressInfo).port);
  app.get('/v1/who', async (request) => {
    const caller = callerOfRequest(request);
    return { name: caller.name, issuer: caller.issuer ?? null, admin: caller.admin, owner: caller.owner };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  closers.push(() => app.close());
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/v1/who`;
  return {
    async who(bearer) {
      const response = await fetch(url, { headers: bearer === undefined ? {} : { authorization: `Bearer ${bearer}` } });
      return { status: response.status, body: await response.json(), wwwAuthenticate: response.headers.get('www-authenticate') };
    },
  };
}

/** What a 401 carrying `line` looks like. */
function refused(line: string): Answer {
  return { status: 401, body: { error: line }, wwwAuthenticate: 'Bearer' };
}

/** What a 503 carrying `line` looks like (no challenge: the credentials may be good). */
function unavailable(line: string): Answer {
  return { status: 503, body: { error: line }, wwwAuthenticate: null };
}

/** An unsecured JWT (`alg: none`, empty signature) of `claims`, written by hand as an attacker would. */
function unsecuredJwt(claims: Record<string, unknown>): string {
  const part = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claims)}.`;
}

const nowS = (): number => Math.floor(Date.now() / 1000);

/** The requests the issuer `of` has served so far, to compare with later. */
function requestsOf(of: OpenIdIssuer = issuer): { discovery: number; jwks: number } {
  return { ...of.requests };
}

describe('serve with JWTs from a real OpenID issuer', () => {
  it('lets a valid JWT in as its subject, qualified by the issuer, with an RS256 or an ES256 signature', async () => {
    const { who } = await guardedApp({ auth: { jwt: jwtSection() } });
    const owner = { key: expect.stringMatching(/^o[A-Za-z0-9_-]{32}$/), label: `alice (${issuer.url})` };
    expect(await who(await issuer.sign())).toEqual({ status: 200, body: { name: 'alice', issuer: issuer.url, admin: false, owner }, wwwAuthenticate: null });
    expect((await who(await issuer.sign({ sub: 'bob' }, { alg: 'ES256' }))).body).toEqual({
      name: 'bob',
      issuer: issuer.url,
      admin: false,
      owner: { key: expect.stringMatching(/^o/), label: `bob (${issuer.url})` },
    });
    // Within the clock tolerance (30 s by default), a token just expired is still good.
    expect((await who(await issuer.sign({ exp: nowS() - 10 }))).status).toBe(200);
    expect(await who()).toEqual(refused('missing Authorization: Bearer <JWT>'));
  });

  it('refuses a JWT that has expired, is for another audience, is from another issuer or is not valid yet, each in one line', async () => {
    const { who } = await guardedApp({ auth: { jwt: jwtSection() } });
    expect(await who(await issuer.sign({ iat: nowS() - 900, exp: nowS() - 600 }))).toEqual(refused('the JWT is refused: it has expired'));
    expect(await who(await issuer.sign({ aud: 'another-service' }))).toEqual(refused('the JWT is refused: it is for another audience'));
    expect(await who(await issuer.sign({ iss: 'https://idp.example.com' }))).toEqual(refused('the JWT is refused: it is from another issuer'));
    expect(await who(await issuer.sign({ nbf: nowS() + 600 }))).toEqual(refused('the JWT is refused: it is not valid yet'));
    expect(await who(await issuer.sign({ sub: undefined }))).toEqual(refused('the JWT is refused: its sub claim is not a name (a string of 1-256 characters)'));
    // A token that never expires is not taken.
    expect(await who(await issuer.sign({ exp: undefined }))).toEqual(refused('the JWT is refused: it has no exp claim (a token must expire)'));
  });

  it('refuses a JWT signed with a key the issuer never published, whatever kid it names, and one changed after signing', async () => {
    const { who } = await guardedApp({ auth: { jwt: jwtSection() } });
    const impostorWithPublishedKid = await generateSigningKey('RS256', issuer.currentKey().kid);
    expect(await who(await issuer.sign({}, { key: impostorWithPublishedKid }))).toEqual(refused("the JWT is refused: its signature does not verify with the issuer's keys"));
    const impostorWithOwnKid = await generateSigningKey('RS256');
    expect(await who(await issuer.sign({}, { key: impostorWithOwnKid }))).toEqual(refused("the JWT is refused: no key of the issuer's matches it"));
    const [header, , signature] = (await issuer.sign({ sub: 'alice' })).split('.');
    const promoted = Buffer.from(JSON.stringify({ iss: issuer.url, aud: DEFAULT_AUDIENCE, sub: 'root', exp: nowS() + 300 })).toString('base64url');
    expect(await who(`${header}.${promoted}.${signature}`)).toEqual(refused("the JWT is refused: its signature does not verify with the issuer's keys"));
  });

  it("refuses alg none and an HS256 JWT keyed with the issuer's public key", async () => {
    const { who } = await guardedApp({ auth: { jwt: jwtSection() } });
    const claims = { iss: issuer.url, aud: DEFAULT_AUDIENCE, sub: 'alice', iat: nowS(), exp: nowS() + 300 };
    expect(await who(unsecuredJwt(claims))).toEqual(refused('the JWT is refused: its algorithm is not allowed (asymmetric signatures only)'));
    const publicKeyAsSecret = new TextEncoder().encode(issuer.currentKey().publicPem);
    const hmac = await issuer.sign({}, { alg: 'HS256', key: publicKeyAsSecret, kid: issuer.currentKey().kid });
    expect(await who(hmac)).toEqual(refused('the JWT is refused: its algorithm is not allowed (asymmetric signatures only)'));
  });

  it('reads the discovery document and the key set once for many requests', async () => {
    const before = requestsOf();
    const { who } = await guardedApp({ auth: { jwt: jwtSection() } });
    const token = await issuer.sign();
    const answers = await Promise.all(Array.from({ length: 20 }, () => who(token)));
    for (let i = 0; i < 5; i++) answers.push(await who(await issuer.sign({ sub: `user-${i}` })));
    expect(answers.map((a) => a.status)).toEqual(Array(25).fill(200));
    expect(requestsOf()).toEqual({ discovery: before.discovery + 1, jwks: before.jwks + 1 });
  });

  it('reads the key set again for the kid of a rotated key, at most once per cooldown', async () => {
    const rotating = await startOpenIdIssuer();
    closers.push(() => rotating.close());
    const { who } = await guardedApp({ auth: { jwt: jwtSection({}, rotating) } });
    const oldToken = await rotating.sign();
    expect((await who(oldToken)).status).toBe(200);
    expect(requestsOf(rotating)).toEqual({ discovery: 1, jwks: 1 });

    await rotating.rotate();
    const newToken = await rotating.sign();
    // Just after a read, an unknown kid does not read the key set again: a flood of made-up kids
    // cannot turn into a flood of requests to the issuer.
    expect(await who(newToken)).toEqual(refused("the JWT is refused: no key of the issuer's matches it"));
    expect(requestsOf(rotating)).toEqual({ discovery: 1, jwks: 1 });

    const realNow = Date.now.bind(Date);
    jest.spyOn(Date, 'now').mockImplementation(() => realNow() + KEYS_COOLDOWN_MS + 1000);
    expect((await who(newToken)).body).toMatchObject({ name: 'alice', issuer: rotating.url });
    expect(requestsOf(rotating)).toEqual({ discovery: 1, jwks: 2 });
    // The old key is still published: its tokens still get in, with no further request.
    expect((await who(oldToken)).status).toBe(200);
    expect(requestsOf(rotating)).toEqual({ discovery: 1, jwks: 2 });
  });

  it('names the caller by identityClaim and makes admins by adminClaim (a value in a list, or true)', async () => {
    const byGroups = await guardedApp({ auth: { jwt: jwtSection({ identityClaim: 'email', adminClaim: 'groups=mcp-admins' }) } });
    expect((await byGroups.who(await issuer.sign({ email: 'carol@example.com', groups: ['staff', 'mcp-admins'] }))).body).toMatchObject({
      name: 'carol@example.com',
      admin: true,
      owner: { label: `carol@example.com (${issuer.url})` },
    });
    expect((await byGroups.who(await issuer.sign({ email: 'dave@example.com', groups: ['staff'] }))).body).toMatchObject({ name: 'dave@example.com', admin: false });
    expect((await byGroups.who(await issuer.sign({ email: 'erin@example.com', groups: 'mcp-admins' }))).body).toMatchObject({ admin: true });
    expect((await byGroups.who(await issuer.sign({ email: 'frank@example.com' }))).body).toMatchObject({ admin: false });
    expect(await byGroups.who(await issuer.sign({ sub: 'no-email' }))).toEqual(refused('the JWT is refused: its email claim is not a name (a string of 1-256 characters)'));

    const byFlag = await guardedApp({ auth: { jwt: jwtSection({ adminClaim: 'admin' }) } });
    const adminOf = async (admin: unknown): Promise<unknown> => ((await byFlag.who(await issuer.sign({ admin }))).body as { admin: boolean }).admin;
    expect(await adminOf(true)).toBe(true);
    expect(await adminOf(false)).toBe(false);
    expect(await adminOf('true')).toBe(false);
    expect(await adminOf(undefined)).toBe(false);
  });

  it('takes static tokens and JWTs together, a token named alice and the JWT subject alice being two owners', async () => {
    const { who } = await guardedApp({ tokens: [{ name: 'alice', token: TOKEN }], auth: { jwt: jwtSection() } });
    const byToken = await who(TOKEN);
    const byJwt = await who(await issuer.sign({ sub: 'alice' }));
    expect(byToken.body).toEqual({ name: 'alice', issuer: null, admin: false, owner: { key: expect.stringMatching(/^o/), label: 'alice' } });
    expect(byJwt.body).toMatchObject({ name: 'alice', issuer: issuer.url, owner: { label: `alice (${issuer.url})` } });
    const keyOf = (answer: Answer): string => (answer.body as { owner: { key: string } }).owner.key;
    expect(keyOf(byToken)).not.toBe(keyOf(byJwt));
    expect(await who('not-a-token-of-anyone')).toEqual(refused(`the bearer token is not one of serve.tokens or a JWT from ${issuer.url}`));
    expect(await who()).toEqual(refused('missing Authorization: Bearer <token>'));
  });

  it('answers 503 naming the discovery document while the issuer is down, keeps the keys it has, and tries again once it is back', async () => {
    const flaky = await startOpenIdIssuer();
    closers.push(() => flaky.close());
    const section = { auth: { jwt: jwtSection({}, flaky) } };
    const warm = await guardedApp(section);
    const cold = await guardedApp(section);
    const token = await flaky.sign();
    expect((await warm.who(token)).status).toBe(200);
    await flaky.close();

    expect((await warm.who(token)).status).toBe(200);
    const down = unavailable(`sign-in is unavailable: the discovery document ${flaky.discoveryUrl} could not be read: fetch failed`);
    expect(await cold.who(token)).toEqual(down);
    expect(await cold.who(token)).toEqual(down);

    const back = await startOpenIdIssuer({ port: flaky.port });
    closers.push(() => back.close());
    expect(back.url).toBe(flaky.url);
    expect((await cold.who(await back.sign({ sub: 'bob' }))).body).toMatchObject({ name: 'bob', issuer: back.url });
    expect(requestsOf(back)).toEqual({ discovery: 1, jwks: 1 });
  });

  it('reads the keys from jwksUrl, with no discovery, when it is given', async () => {
    const before = requestsOf();
    const { who } = await guardedApp({ auth: { jwt: jwtSection({ jwksUrl: issuer.jwksUrl }) } });
    expect((await who(await issuer.sign())).status).toBe(200);
    expect((await who(await issuer.sign({ sub: 'bob' }))).status).toBe(200);
    expect(requestsOf()).toEqual({ discovery: before.discovery, jwks: before.jwks + 1 });
  });
});

describe('serve with an OpenID issuer whose documents cannot be used', () => {
  let misbehaving: OpenIdIssuer;
  beforeAll(async () => {
    misbehaving = await startOpenIdIssuer();
  });
  afterEach(() => {
    for (const key of Object.keys(misbehaving.overrides)) delete misbehaving.overrides[key as keyof typeof misbehaving.overrides];
  });
  afterAll(async () => {
    await misbehaving?.close();
  });

  it('refuses a discovery document that names another issuer: serve.auth.jwt.issuer must be the issuer exactly', async () => {
    misbehaving.overrides.discovery = (honest) => ({ ...honest, issuer: 'https://idp.example.com' });
    const token = await misbehaving.sign();
    const { who } = await guardedApp({ auth: { jwt: jwtSection({}, misbehaving) } });
    expect(await who(token)).toEqual(
      unavailable(
        `sign-in is unavailable: the discovery document ${misbehaving.discoveryUrl} names issuer https://idp.example.com, not ${misbehaving.url}: ` +
          'serve.auth.jwt.issuer must be the issuer exactly',
      ),
    );

    delete misbehaving.overrides.discovery;
    const withSlash = await guardedApp({ auth: { jwt: jwtSection({ issuer: `${misbehaving.url}/` }, misbehaving) } });
    expect(await withSlash.who(token)).toEqual(
      unavailable(
        `sign-in is unavailable: the discovery document ${misbehaving.discoveryUrl} names issuer ${misbehaving.url}, not ${misbehaving.url}/: ` +
          'serve.auth.jwt.issuer must be the issuer exactly',
      ),
    );
  });

  it('answers 503 for a discovery document that is not an object, names no jwks_uri, or names one that is not a URL or not https', async () => {
    const token = await misbehaving.sign();
    const cases: Array<[(honest: Record<string, unknown>) => unknown, string]> = [
      [() => null, 'could not be read: not a JSON object'],
      [(honest) => ({ ...honest, jwks_uri: undefined }), 'names no jwks_uri: set serve.auth.jwt.jwksUrl'],
      [(honest) => ({ ...honest, jwks_uri: 'keys.json' }), 'names jwks_uri keys.json, which is not a URL'],
      [
        (honest) => ({ ...honest, jwks_uri: 'http://keys.example.com/jwks' }),
        "names jwks_uri http://keys.example.com/jwks, which must be https (http only on this machine): keys read over plain HTTP could be anyone's",
      ],
    ];
    for (const [discovery, problem] of cases) {
      misbehaving.overrides.discovery = discovery;
      const { who } = await guardedApp({ auth: { jwt: jwtSection({}, misbehaving) } });
      expect(await who(token)).toEqual(unavailable(`sign-in is unavailable: the discovery document ${misbehaving.discoveryUrl} ${problem}`));
    }
  });

  it('answers 503 while the key set answers an error or is not a key set, and lets the token in once it is', async () => {
    const token = await misbehaving.sign();
    const { who } = await guardedApp({ auth: { jwt: jwtSection({}, misbehaving) } });
    misbehaving.overrides.jwksStatus = 500;
    expect(await who(token)).toEqual(
      unavailable(`sign-in is unavailable: the keys of ${misbehaving.url} could not be read: Expected 200 OK from the JSON Web Key Set HTTP response`),
    );
    delete misbehaving.overrides.jwksStatus;
    misbehaving.overrides.jwks = () => ({ keys: 'none' });
    expect(await who(token)).toEqual(unavailable(`sign-in is unavailable: the keys of ${misbehaving.url} could not be read: JSON Web Key Set malformed`));
    delete misbehaving.overrides.jwks;
    expect((await who(token)).status).toBe(200);
  });
});
