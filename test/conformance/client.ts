/**
 * The client the official MCP conformance suite (`@modelcontextprotocol/conformance`) drives: the
 * project's own MCP layer, configured from a real config file, doing what a worker does.
 *
 *   conformance client --command "node test/conformance/run-client.js" --scenario <name>
 *
 * The suite appends the server URL and sets `MCP_CONFORMANCE_SCENARIO` (and, for pre-registered
 * clients, `MCP_CONFORMANCE_CONTEXT`). Calls go through `McpPool` (argument validation, result
 * conversion, redaction); the tool list of the schema scenario is read through `ServerConnection`,
 * the layer that keeps the server's schema as published. Authorization-code scenarios run
 * `authorizeServer` (what `mcp-turns auth` runs) with the person's browser played by fetch, then a
 * worker-side pool uses the stored tokens; a scope a server demands later is one more `auth` run,
 * as it would be for a person. Exits non-zero when a step fails.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { McpPool, type McpLogger } from '../../src/mcp';
import { authorizeServer } from '../../src/mcp/oauth-authorization';
import { ServerConnection } from '../../src/mcp/server-connection';
import { parseConfig } from '../../src/config/config-file';
import { testStateDir } from '../support/settings';

const SERVER = 'conformance';
/** The client ID metadata document URL the suite's CIMD scenario expects (it need not resolve). */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

const log: McpLogger = {
  debug: () => undefined,
  info: (message, fields) => console.error(`info ${message} ${JSON.stringify(fields)}`),
  warn: (message, fields) => console.error(`warn ${message} ${JSON.stringify(fields)}`),
  error: (message, fields) => console.error(`error ${message} ${JSON.stringify(fields)}`),
};

interface Context {
  client_id?: string;
  client_secret?: string;
}

/** The `oauth` block a scenario needs, as a user would write it. */
function oauthFor(
  scenario: string,
  context: Context,
  tokenFile: string,
): Record<string, unknown> | undefined {
  if (!scenario.startsWith('auth/')) return undefined;
  if (scenario === 'auth/client-credentials-basic') {
    return {
      grant: 'client_credentials',
      clientId: context.client_id,
      clientSecret: '${CONFORMANCE_CLIENT_SECRET}',
    };
  }
  const base = { redirectPort: 0, tokenFile, clientName: 'mcp-turns conformance' };
  if (scenario === 'auth/pre-registration') {
    return { ...base, clientId: context.client_id, clientSecret: '${CONFORMANCE_CLIENT_SECRET}' };
  }
  return { ...base, clientMetadataUrl: CLIENT_METADATA_URL };
}

/** Plays the person: opens the authorization URL and follows its redirect to the local listener. */
async function approve(url: URL): Promise<void> {
  const consent = await fetch(url, { redirect: 'manual' });
  const back = consent.headers.get('location');
  if (!back) throw new Error(`the authorization server did not redirect (${consent.status})`);
  const landed = await fetch(back);
  if (!landed.ok) throw new Error(`the redirect listener answered ${landed.status}: ${await landed.text()}`);
}

async function main(): Promise<void> {
  const url = process.argv[process.argv.length - 1]!;
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}') as Context;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-conformance-'));
  const oauth = oauthFor(scenario, context, path.join(dir, 'tokens.json'));
  const file = { mcpServers: { [SERVER]: { type: 'http', url, ...(oauth ? { oauth } : {}) } } };
  const env = { ...process.env, CONFORMANCE_CLIENT_SECRET: context.client_secret ?? '' };
  const [server] = parseConfig(JSON.stringify(file), 'json', env, 'conformance config', testStateDir()).servers;
  const person = (): Promise<unknown> =>
    authorizeServer(server!, { openUrl: approve, timeoutMs: 10_000, log });

  if (server!.oauth?.grant === 'authorization_code') await person();
  const pool = new McpPool([server!], log);
  try {
    const call = async (tool: string, args: Record<string, unknown>): Promise<void> => {
      const out = await pool.callTool({ server: SERVER, tool, arguments: args, toolUseId: `${tool}-call` });
      if (out.isError) throw new Error(`${tool} failed: ${JSON.stringify(out.content)}`);
    };
    const listed = await pool.listTools();
    if (listed.unavailable.length) throw new Error(`server unavailable: ${listed.unavailable[0]!.reason}`);

    if (scenario === 'json-schema-2020-12-preservation') {
      // The connection keeps the schema as published (Claude is offered an accepted copy).
      const connection = new ServerConnection(server!, log);
      try {
        const focal = (await connection.tools()).find((t) => t.name === 'json_schema_2020_12_tool');
        if (!focal) throw new Error('json_schema_2020_12_tool is not listed');
        await call('json_schema_echo', { schema: focal.inputSchema });
      } finally {
        await connection.close();
      }
    } else if (scenario === 'json-schema-ref-no-deref') {
      // Listing is the whole scenario: the network $ref must never be fetched.
    } else if (scenario.startsWith('auth/')) {
      if (scenario === 'auth/client-credentials-basic') return;
      try {
        await call('test-tool', {});
      } catch (err) {
        // A scope the grant lacks: the worker logged it; the person authorizes once more.
        if (!(scenario === 'auth/scope-step-up' || scenario === 'auth/scope-retry-limit')) throw err;
        console.error(`call refused (${(err as Error).message}); authorizing again`);
        await person();
        await call('test-tool', {});
      }
    } else {
      const tool = listed.tools[0];
      if (tool) await call(tool.name, { a: 2, b: 3 });
    }
  } finally {
    await pool.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().then(
  // Done: idle keep-alive sockets must not hold the suite waiting for this process to end.
  () => process.exit(0),
  (err: unknown) => {
    console.error(`conformance client failed: ${(err as Error).stack ?? String(err)}`);
    process.exit(1);
  },
);
