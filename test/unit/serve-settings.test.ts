/**
 * `serve`'s settings and its guard: a bind beyond loopback needs a token or OpenID JWTs; tokens from
 * the config and MCP_TURNS_SERVE_TOKENS, each a user or an admin; `serve.auth.jwt` with its
 * defaults; every problem one line naming its key; tokens compared by name in constant time; the
 * hosts and origins a request may name.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { resolveServeSettings, ServeSettingsError, isLoopbackHost, JWT_ALGORITHMS } from '../../src/config/serve-settings';
import { allowedHostsOf, guardRequests, tokenOf } from '../../src/serve/request-guard';
import { LOCAL_CALLER } from '../../src/serve/caller';

const TOKEN = 'a-long-enough-token-1234';

function problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    if (err instanceof ServeSettingsError) return err.problems;
    throw err;
  }
  return [];
}

/** A GET to `app` (listening on loopback) naming `headers.host` as its Host. */
async function request(app: FastifyInstance, url: string, headers: Record<string, string>) {
  if (!app.server.listening) await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  return new Promise<{ statusCode: number; headers: http.IncomingHttpHeaders; json(): unknown }>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: url, headers }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, json: () => JSON.parse(body) }));
      })
      .on('error', reject);
  });
}

describe('serve settings', () => {
  it('binds to loopback on 8787 by default, with no token', () => {
    expect(resolveServeSettings(undefined, {}, {})).toMatchObject({ host: '127.0.0.1', port: 8787, tokens: [], stalledStreamSeconds: 30 });
    expect(resolveServeSettings({ stalledStreamSeconds: 3 }, {}, {}).stalledStreamSeconds).toBe(3);
    expect(problems(() => resolveServeSettings({ stalledStreamSeconds: 0 }, {}, {}))).toEqual([expect.stringMatching(/^serve\.stalledStreamSeconds: /)]);
  });

  it('refuses a bind beyond loopback without a token, and says how to add one', () => {
    expect(problems(() => resolveServeSettings(undefined, { host: '0.0.0.0' }, {}))).toEqual([
      expect.stringMatching(/^--host 0\.0\.0\.0: serving beyond this machine needs auth: add serve\.tokens .* set MCP_TURNS_SERVE_TOKENS=name:token, or add serve\.auth\.jwt$/),
    ]);
    expect(resolveServeSettings({ tokens: [{ name: 'alice', token: TOKEN }] }, { host: '0.0.0.0' }, {}).tokens).toEqual([{ name: 'alice', token: TOKEN }]);
    expect(resolveServeSettings(undefined, { host: '0.0.0.0' }, { MCP_TURNS_SERVE_TOKENS: `bob:${TOKEN}` }).tokens).toEqual([{ name: 'bob', token: TOKEN }]);
  });

  it('names each bad key in one line', () => {
    expect(
      problems(() =>
        resolveServeSettings({ port: 'x', tokens: [{ name: 'a b', token: 'short' }], extra: 1 }, {}, { MCP_TURNS_SERVE_TOKENS: 'nocolon' }),
      ),
    ).toEqual([
      expect.stringMatching(/^serve\.port: /),
      expect.stringMatching(/^serve\.tokens\.0\.name: a name of 1-64 characters/),
      expect.stringMatching(/^serve\.tokens\.0\.token: at least 16 characters/),
      'serve.extra: unknown key',
      'MCP_TURNS_SERVE_TOKENS item 1: write name:token or name:token:admin (e.g. alice:<a long random token>)',
    ]);
    expect(problems(() => resolveServeSettings({ tokens: [{ name: 'a', token: TOKEN }] }, {}, { MCP_TURNS_SERVE_TOKENS: `a:${TOKEN}x` }))).toEqual([
      'serve.tokens: the name a is given twice (each token names one approver)',
    ]);
    // One token under two names would authenticate as the first.
    expect(problems(() => resolveServeSettings({ tokens: [{ name: 'alice', token: TOKEN }] }, {}, { MCP_TURNS_SERVE_TOKENS: `bob:${TOKEN}` }))).toEqual([
      'serve.tokens: alice and bob have the same token (each needs its own)',
    ]);
  });

  it('gives tokens roles: name:token:admin in MCP_TURNS_SERVE_TOKENS, role in the config', () => {
    const fromEnv = resolveServeSettings(undefined, {}, { MCP_TURNS_SERVE_TOKENS: `alice:${TOKEN},root:${TOKEN}-root:admin,bob:${TOKEN}-bob:user` });
    expect(fromEnv.tokens).toEqual([
      { name: 'alice', token: TOKEN },
      { name: 'root', token: `${TOKEN}-root`, role: 'admin' },
      { name: 'bob', token: `${TOKEN}-bob`, role: 'user' },
    ]);
    const fromConfig = resolveServeSettings({ tokens: [{ name: 'ops', token: TOKEN, role: 'admin' }, { name: 'carol', token: `${TOKEN}-carol` }] }, {}, {});
    expect(fromConfig.tokens).toEqual([
      { name: 'ops', token: TOKEN, role: 'admin' },
      { name: 'carol', token: `${TOKEN}-carol` },
    ]);
    expect(problems(() => resolveServeSettings({ tokens: [{ name: 'ops', token: TOKEN, role: 'owner' }] }, {}, {}))).toEqual([
      'serve.tokens.0.role: Invalid option: expected one of "user"|"admin"',
    ]);
  });

  it('allows a bind beyond loopback with only serve.auth.jwt, and fills in its defaults', () => {
    const settings = resolveServeSettings({ auth: { jwt: { issuer: 'https://idp.example.com', audience: 'mcp-turns' } } }, { host: '0.0.0.0' }, {});
    expect(settings).toMatchObject({ host: '0.0.0.0', tokens: [] });
    expect(settings.jwt).toEqual({
      issuer: 'https://idp.example.com',
      audience: ['mcp-turns'],
      identityClaim: 'sub',
      algorithms: [...JWT_ALGORITHMS],
      clockToleranceSeconds: 30,
    });
    const jwtOf = (fields: Record<string, unknown>) =>
      resolveServeSettings({ auth: { jwt: { issuer: 'https://idp.example.com', audience: 'mcp-turns', ...fields } } }, {}, {}).jwt;
    expect(jwtOf({ adminClaim: 'groups=mcp-admins' })?.adminClaim).toEqual({ claim: 'groups', value: 'mcp-admins' });
    expect(jwtOf({ adminClaim: 'admin' })?.adminClaim).toEqual({ claim: 'admin', value: 'admin' });
    expect(jwtOf({ audience: ['mcp-turns', 'account'], identityClaim: 'email', algorithms: ['ES256'], clockToleranceSeconds: 0 })).toMatchObject({
      audience: ['mcp-turns', 'account'],
      identityClaim: 'email',
      algorithms: ['ES256'],
      clockToleranceSeconds: 0,
    });
    // Plain HTTP is for an issuer on this machine only.
    expect(jwtOf({ issuer: 'http://127.0.0.1:8080', jwksUrl: 'http://localhost:8080/keys' })).toMatchObject({ issuer: 'http://127.0.0.1:8080', jwksUrl: 'http://localhost:8080/keys' });
  });

  it('names each problem of serve.auth.jwt in one line', () => {
    const jwtProblems = (jwt: Record<string, unknown>) => problems(() => resolveServeSettings({ auth: { jwt } }, {}, {}));
    expect(jwtProblems({ issuer: 'not a url', audience: 'mcp-turns' })).toEqual(['serve.auth.jwt.issuer: Invalid URL']);
    expect(jwtProblems({ issuer: 'http://idp.example.com', audience: 'mcp-turns', jwksUrl: 'http://idp.example.com/jwks' })).toEqual([
      "serve.auth.jwt.issuer: http://idp.example.com must be https (http only on this machine): keys read over plain HTTP could be anyone's",
      "serve.auth.jwt.jwksUrl: http://idp.example.com/jwks must be https (http only on this machine): keys read over plain HTTP could be anyone's",
    ]);
    expect(jwtProblems({ issuer: 'https://idp.example.com', audience: 'mcp-turns', adminClaim: 'groups=a=b' })).toEqual(['serve.auth.jwt.adminClaim: claim or claim=value']);
    expect(jwtProblems({ issuer: 'https://idp.example.com', audience: 'mcp-turns', scope: 'openid' })).toEqual(['serve.auth.jwt.scope: unknown key']);
    expect(jwtProblems({ issuer: 'https://idp.example.com', audience: 'mcp-turns', algorithms: ['RS256', 'HS256'] })).toEqual([
      `serve.auth.jwt.algorithms.1: Invalid option: expected one of ${JWT_ALGORITHMS.map((a) => `"${a}"`).join('|')}`,
    ]);
    expect(jwtProblems({ issuer: 'https://idp.example.com', audience: [], clockToleranceSeconds: 301 })).toEqual([
      'serve.auth.jwt.audience: Too small: expected array to have >=1 items',
      'serve.auth.jwt.clockToleranceSeconds: Too big: expected number to be <=300',
    ]);
    expect(problems(() => resolveServeSettings({ auth: { oauth: {} } }, {}, {}))).toEqual(['serve.auth.oauth: unknown key']);
  });

  it('reads per-caller limits, admins apart, and names a bad one', () => {
    expect(resolveServeSettings(undefined, {}, {}).limits).toEqual({ user: {}, admin: {} });
    expect(resolveServeSettings({ limits: { turnsInFlight: 4, tokensPerDay: 1000, admins: { turnsInFlight: 50 } } }, {}, {}).limits).toEqual({
      user: { turnsInFlight: 4, tokensPerDay: 1000 },
      admin: { turnsInFlight: 50 },
    });
    expect(problems(() => resolveServeSettings({ limits: { turnsInFlight: 0, perHour: 3 } }, {}, {}))).toEqual([
      'serve.limits.turnsInFlight: Too small: expected number to be >=1',
      'serve.limits.perHour: unknown key',
    ]);
  });

  it('knows loopback binds', () => {
    for (const h of ['127.0.0.1', 'localhost', '::1', '[::1]', '127.1.2.3']) expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['0.0.0.0', '::', '10.0.0.5', 'example.com']) expect(isLoopbackHost(h)).toBe(false);
  });
});

describe('the request guard', () => {
  it('finds the token by value and answers its name', () => {
    const tokens = [
      { name: 'alice', token: TOKEN },
      { name: 'bob', token: `${TOKEN}-bob` },
    ];
    expect(tokenOf(tokens, `${TOKEN}-bob`)?.name).toBe('bob');
    expect(tokenOf(tokens, TOKEN)?.name).toBe('alice');
    expect(tokenOf(tokens, 'nope')).toBeUndefined();
  });

  it('allows the loopback names on its port and the listed hosts', () => {
    const settings = resolveServeSettings({ allowedHosts: ['chat.example.com'] }, { port: 9000 }, {});
    expect([...allowedHostsOf(settings, 9000)].sort()).toEqual(['127.0.0.1:9000', '[::1]:9000', 'chat.example.com', 'localhost:9000']);
  });

  it('refuses foreign hosts and origins, asks for the token, and names who acts', async () => {
    const settings = resolveServeSettings(
      { tokens: [{ name: 'alice', token: TOKEN }], allowedOrigins: ['https://app.example.com'] },
      { port: 9000 },
      {},
    );
    const app = Fastify();
    guardRequests(app, settings, () => 9000);
    app.get('/v1/who', async (request) => ({ actor: request.caller?.name }));
    app.get('/anything', async (request) => ({ actor: request.caller?.name }));
    app.get('/', { config: { open: true } }, async (request) => ({ actor: request.caller?.name }));
    const get = (url: string, headers: Record<string, string>) => request(app, url, { host: 'localhost:9000', ...headers });

    expect((await get('/v1/who', { authorization: `Bearer ${TOKEN}` })).json()).toEqual({ actor: 'alice' });
    expect((await get('/v1/who', { authorization: `Bearer ${TOKEN}`, origin: 'https://app.example.com' })).statusCode).toBe(200);
    expect((await get('/v1/who', { authorization: `Bearer ${TOKEN}`, origin: 'http://localhost:9000' })).statusCode).toBe(200);
    const foreign = await get('/v1/who', { authorization: `Bearer ${TOKEN}`, origin: 'http://localhost:9001' });
    expect([foreign.statusCode, foreign.json()]).toEqual([403, { error: 'Origin http://localhost:9001 may not call this server: add it to serve.allowedOrigins' }]);
    const rebound = await get('/v1/who', { host: 'attacker.example:9000', authorization: `Bearer ${TOKEN}` });
    expect(rebound.statusCode).toBe(403);
    const missing = await get('/v1/who', {});
    expect([missing.statusCode, missing.headers['www-authenticate'], missing.json()]).toEqual([401, 'Bearer', { error: 'missing Authorization: Bearer <token>' }]);
    expect((await get('/v1/who', { authorization: 'Bearer wrong' })).json()).toEqual({ error: 'the bearer token is not one of serve.tokens' });
    // The page itself is open; it asks for the token before it calls the API.
    expect((await get('/', {})).statusCode).toBe(200);
    // A route is closed unless declared open, whatever its path looks like or how it is spelt.
    for (const url of ['/anything', '/%61nything', '/v%31/who', '/%761/who'])
      expect([url, (await get(url, {})).statusCode]).toEqual([url, 401]);
    await app.close();
  });

  it('makes the holder of an admin token an admin and every other holder a user, each its own owner', async () => {
    const settings = resolveServeSettings({ tokens: [{ name: 'ops', token: `${TOKEN}-ops`, role: 'admin' }] }, { port: 9000 }, {
      MCP_TURNS_SERVE_TOKENS: `alice:${TOKEN},root:${TOKEN}-root:admin`,
    });
    const app = Fastify();
    guardRequests(app, settings, () => 9000);
    app.get('/v1/who', async (request) => ({ name: request.caller?.name, admin: request.caller?.admin, owner: request.caller?.owner.label }));
    const whoHolds = async (token: string) => (await request(app, '/v1/who', { host: 'localhost:9000', authorization: `Bearer ${token}` })).json();
    expect(await whoHolds(TOKEN)).toEqual({ name: 'alice', admin: false, owner: 'alice' });
    expect(await whoHolds(`${TOKEN}-root`)).toEqual({ name: 'root', admin: true, owner: 'root' });
    expect(await whoHolds(`${TOKEN}-ops`)).toEqual({ name: 'ops', admin: true, owner: 'ops' });
    await app.close();
  });

  it('lets every loopback request act as the local user when no token is configured', async () => {
    const settings = resolveServeSettings(undefined, { port: 9000 }, {});
    const app = Fastify();
    guardRequests(app, settings, () => 9000);
    app.get('/v1/who', async (request) => ({ actor: request.caller?.name }));
    expect((await request(app, '/v1/who', { host: '127.0.0.1:9000' })).json()).toEqual({ actor: LOCAL_CALLER.name });
    await app.close();
  });
});
