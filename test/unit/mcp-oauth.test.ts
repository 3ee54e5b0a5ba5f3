/** OAuth pieces that need no server: the config keys in both shapes, the token file, and redaction of tokens. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '../../src/config/config-file';
import { FileTokenStore, defaultTokenFile } from '../../src/mcp/oauth-token-store';
import { AuthorizationServerMismatchError } from '@modelcontextprotocol/client';
import { McpOAuthProvider } from '../../src/mcp/oauth-provider';
import { runtimeSecrets, serverRedactors } from '../../src/mcp/redaction';
import { stateDir } from '../../src/temporal/project-paths';
import { docBlock } from '../support/doc-blocks';

const env = { CC_SECRET: 'cc-secret-5e1f0a9b' };
const dir = stateDir(process.env);

function parse(text: string, format: 'json' | 'yaml' = 'yaml') {
  return parseConfig(text, format, env, 'test', dir);
}

function problemsOf(text: string, format: 'json' | 'yaml' = 'yaml'): string[] {
  try {
    parse(text, format);
    return [];
  } catch (err) {
    return (err as { problems: string[] }).problems;
  }
}

describe('config', () => {
  it('reads the oauth block in the snake_case shape, with defaults', () => {
    const [cc, code] = parse(`
mcp_servers:
  m2m:
    url: https://mcp.example.com/mcp
    oauth: { grant: client_credentials, client_id: svc, client_secret: "\${CC_SECRET}", scope: "read write", issuer: https://auth.example.com }
  person:
    url: https://other.example.com/mcp
    oauth: {}
`).servers;
    expect(cc!.oauth).toMatchObject({
      grant: 'client_credentials',
      clientId: 'svc',
      clientSecret: env.CC_SECRET,
      scope: 'read write',
      issuer: 'https://auth.example.com',
    });
    expect(code!.oauth).toMatchObject({
      grant: 'authorization_code',
      clientName: 'mcp-turns',
      redirectPort: 33418,
      tokenFile: path.join(dir, 'oauth', 'person.json'),
    });
    expect(code!.oauth!.tokenFile).toBe(defaultTokenFile('person', dir));
  });

  it('reads the same keys in camelCase in the .mcp.json shape', () => {
    const [server] = parse(
      JSON.stringify({
        mcpServers: {
          s: {
            type: 'http',
            url: 'https://mcp.example.com/mcp',
            oauth: {
              clientId: 'pre',
              clientSecret: 'x-secret-1',
              redirectPort: 8765,
              tokenFile: '/tmp/t.json',
              clientMetadataUrl: 'https://app.example.com/client.json',
              clientName: 'my app',
            },
          },
        },
      }),
      'json',
    ).servers;
    expect(server!.oauth).toMatchObject({
      grant: 'authorization_code',
      clientId: 'pre',
      clientSecret: 'x-secret-1',
      redirectPort: 8765,
      tokenFile: '/tmp/t.json',
      clientMetadataUrl: 'https://app.example.com/client.json',
      clientName: 'my app',
    });
  });

  it('accepts the OAuth example in docs/configuration.md', () => {
    const yaml = docBlock('docs/configuration.md', 'oauth-example').body;
    const servers = parseConfig(
      yaml,
      'yaml',
      { BILLING_CLIENT_SECRET: 'b-secret-123' },
      'docs/configuration.md',
      dir,
    ).servers;
    expect(servers.map((s) => [s.name, s.oauth?.grant])).toEqual([
      ['billing', 'client_credentials'],
      ['notes', 'authorization_code'],
    ]);
    expect(servers[1]!.oauth!.tokenFile).toBe('/var/lib/mcp-turns/notes.json');
  });

  it('refuses what cannot work, naming the path as written', () => {
    expect(
      problemsOf(`
mcp_servers:
  a: { url: https://x.example.com/mcp, oauth: { grant: client_credentials, redirect_port: 1 } }
  b: { command: node, oauth: {} }
  c: { url: https://x.example.com/mcp, authorization: tok123, oauth: {} }
  d: { url: https://x.example.com/mcp, oauth: { clientId: x } }
`),
    ).toEqual([
      'mcp_servers.a.oauth.client_id: required for grant client_credentials',
      'mcp_servers.a.oauth.client_secret: required for grant client_credentials',
      'mcp_servers.a.oauth.redirect_port: only for grant authorization_code',
      'mcp_servers.b.oauth: not allowed for a stdio server (set type: streamable-http or sse)',
      'mcp_servers.c.oauth: conflicts with a static Authorization (give one)',
      'mcp_servers.d.oauth.clientId: unknown key (mcp_servers uses client_id)',
    ]);
    expect(
      problemsOf(
        JSON.stringify({
          mcpServers: { e: { url: 'https://x.example.com/mcp', oauth: { client_id: 'x' } } },
        }),
        'json',
      ),
    ).toEqual(['mcpServers.e.oauth.client_id: unknown key (mcpServers uses clientId)']);
  });
});

describe('the token file', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-tokens-'));

  it('is written whole with mode 0600 in a 0700 folder, and read again when it changes on disk', async () => {
    const file = path.join(dir, 'nested', 'srv.json');
    const store = new FileTokenStore(file);
    expect(await store.load()).toBeUndefined();
    await store.save({
      url: 'https://a.example.com/mcp',
      tokens: { access_token: 'a1', token_type: 'Bearer' },
    });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect((await store.load())?.tokens?.access_token).toBe('a1');
    // Another process (mcp-turns auth, another worker) replaces it: the next load sees it.
    await new FileTokenStore(file).save({
      url: 'https://a.example.com/mcp',
      tokens: { access_token: 'a2', token_type: 'Bearer' },
    });
    expect((await store.load())?.tokens?.access_token).toBe('a2');
    expect(fs.readdirSync(path.dirname(file))).toEqual(['srv.json']); // no temporary files left
  });

  it('says what to do when it is not JSON', async () => {
    const file = path.join(dir, 'broken.json');
    fs.writeFileSync(file, '{ nope');
    await expect(new FileTokenStore(file).load()).rejects.toThrow(
      `token file ${file} is not valid JSON (delete it and run mcp-turns auth again)`,
    );
  });
});

describe('the provider', () => {
  it('keeps a record stored for another URL away from this server', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-tokens-')), 's.json');
    await new FileTokenStore(file).save({
      url: 'https://old.example.com/mcp',
      tokens: { access_token: 'old-access', token_type: 'Bearer' },
      clientInformation: { client_id: 'old-client' },
    });
    const [server] = parse(
      `mcp_servers: { s: { url: https://new.example.com/mcp, oauth: { token_file: ${file} } } }`,
    ).servers;
    const provider = new McpOAuthProvider(server!);
    expect(await provider.tokens()).toBeUndefined();
    await expect(provider.clientInformation()).rejects.toThrow(
      'server s needs a person to authorize it (it has no stored OAuth client): run `mcp-turns auth s` with the worker',
    );
  });

  it('presents a configured client only to the authorization server its issuer names', async () => {
    const [bound, unbound] = parse(`
mcp_servers:
  bound: { url: https://mcp.example.com/mcp, oauth: { grant: client_credentials, client_id: svc, client_secret: "\${CC_SECRET}", issuer: https://auth.example.com } }
  unbound: { url: https://mcp.example.com/mcp, oauth: { grant: client_credentials, client_id: svc, client_secret: "\${CC_SECRET}" } }
`).servers;
    const provider = new McpOAuthProvider(bound!);
    expect(await provider.clientInformation({ issuer: 'https://auth.example.com/' })).toEqual({
      client_id: 'svc',
      client_secret: env.CC_SECRET,
      issuer: 'https://auth.example.com',
    });
    await expect(provider.clientInformation({ issuer: 'https://other.example.com' })).rejects.toThrow(
      AuthorizationServerMismatchError,
    );
    // Without an issuer setting it goes to whichever authorization server the MCP server names.
    expect(
      await new McpOAuthProvider(unbound!).clientInformation({ issuer: 'https://other.example.com' }),
    ).toMatchObject({ client_id: 'svc', issuer: 'https://other.example.com' });
  });

  it('a worker does not register with another authorization server: a person must authorize there', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-tokens-')), 's.json');
    await new FileTokenStore(file).save({
      url: 'https://mcp.example.com/mcp',
      clientInformation: { client_id: 'registered', issuer: 'https://auth.example.com/' },
    });
    const [server] = parse(
      `mcp_servers: { s: { url: https://mcp.example.com/mcp, oauth: { token_file: ${file} } } }`,
    ).servers;
    const provider = new McpOAuthProvider(server!);
    expect(await provider.clientInformation({ issuer: 'https://auth.example.com' })).toMatchObject({
      client_id: 'registered',
    });
    await expect(provider.clientInformation({ issuer: 'https://moved.example.com' })).rejects.toThrow(
      'server s needs a person to authorize it (its stored OAuth client is for https://auth.example.com/, not https://moved.example.com)',
    );
  });
});

describe('redaction', () => {
  it('covers the client secret from the start and every token from the moment it arrives', async () => {
    const [server] = parse(`
mcp_servers:
  m2m: { url: https://mcp.example.com/mcp, oauth: { grant: client_credentials, client_id: svc, client_secret: "\${CC_SECRET}" } }
`).servers;
    const { strict, results } = serverRedactors(server!);
    expect(strict.redact(`secret ${env.CC_SECRET}`)).toBe('secret [redacted]');
    expect(results.redact('token access-tok-123456')).toBe('token access-tok-123456');
    const provider = new McpOAuthProvider(server!);
    await provider.saveTokens({
      access_token: 'access-tok-123456',
      refresh_token: 'refresh-tok-654321',
      token_type: 'Bearer',
    });
    expect(results.redact('token access-tok-123456 / refresh-tok-654321')).toBe(
      'token [redacted] / [redacted]',
    );
    expect(strict.redact('Bearer access-tok-123456')).toBe('Bearer [redacted]');
    expect([...runtimeSecrets(server!).all()]).toEqual(
      expect.arrayContaining([env.CC_SECRET, 'access-tok-123456']),
    );
  });
});
