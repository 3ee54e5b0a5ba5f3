/**
 * The client the official MCP conformance suite (`@modelcontextprotocol/conformance`) drives: the
 * project's own MCP layer, configured from a real config file, doing what a worker does.
 *
 *   conformance client --command "node test/conformance/run-client.js" --scenario <name> [--spec-version 2026-07-28]
 *
 * The suite appends the server URL and sets `MCP_CONFORMANCE_SCENARIO`,
 * `MCP_CONFORMANCE_PROTOCOL_VERSION` (the revision its server speaks) and, for some scenarios,
 * `MCP_CONFORMANCE_CONTEXT` (a pre-registered client's credentials, the tool calls to make). The
 * server is configured as a user would write it (`protocol: auto`, the default, unless the test
 * sets `MCP_TURNS_CONFORMANCE_PROTOCOL`). The era the connection negotiated must be the one of the
 * revision the suite runs.
 *
 * Calls go through `McpPool`: argument validation, result conversion, redaction, and the listed
 * definition passed on, so `x-mcp-header` arguments become `Mcp-Param-*` headers. Unless the
 * scenario names its calls, every tool the pool offers is called, as a model would call it: with a
 * value of the right type for each required argument. The tool list of the schema scenario is read
 * through `ServerConnection`, the layer that keeps the server's schema as published.
 *
 * Authorization-code scenarios run `authorizeServer` (what `mcp-turns auth` runs) with the person's
 * browser played by fetch; a worker-side pool then uses the stored tokens. Where the worker says a
 * person must authorize again (a scope the server demands later, another authorization server),
 * the person runs `auth` once more. Exits non-zero when a step fails.
 */
import { MAX_INPUT_ROUNDS, inputResponsesOf } from '../../src/core/input-requests';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { McpPool, type McpLogger } from '../../src/mcp';
import { isRecord } from '../../src/core/is-record';
import { authorizeServer } from '../../src/mcp/oauth-authorization';
import { ServerConnection } from '../../src/mcp/server-connection';
import { parseConfig } from '../../src/config/config-file';
// The settings loader itself, not test/support/settings: that one loads the data converter too, and
// every scenario starts this process anew.
import { loadSettings } from '../../src/config/settings';

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
  /** The calls to make (http-custom-headers). */
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

/**
 * Scenarios where the worker rightly refuses and says a person must authorize again (the error
 * names `mcp-turns auth`): a scope the server demands later, a new authorization server. The
 * person authorizes once more, then the worker goes on. Anywhere else that refusal fails the run.
 */
const AUTHORIZE_AGAIN = new Set(['auth/scope-step-up', 'auth/scope-retry-limit', 'auth/authorization-server-migration']);

/** A value of each JSON Schema type, for arguments a model would give. */
const SAMPLE_VALUES: Record<string, unknown> = { string: 'x', integer: 2, number: 3, boolean: true, object: {}, array: [], null: null };

/** Arguments for a tool: a value of the right type for each required property. */
function sampleArguments(schema: Record<string, unknown>): Record<string, unknown> {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  return Object.fromEntries(
    required.map((name) => {
      const property = properties[name];
      const type = isRecord(property) && typeof property.type === 'string' ? property.type : 'string';
      return [name, SAMPLE_VALUES[type]];
    }),
  );
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
  // The era setting as a user may write it (the test sets it where a scenario needs it); auto by default.
  const protocol = process.env.MCP_TURNS_CONFORMANCE_PROTOCOL;
  const entry = { type: 'http', url, ...(protocol ? { protocol } : {}), ...(oauth ? { oauth } : {}) };
  const file = { mcpServers: { [SERVER]: entry } };
  const env = { ...process.env, CONFORMANCE_CLIENT_SECRET: context.client_secret ?? '' };
  const stateDir = loadSettings({ env: process.env }).stateDir;
  const [server] = parseConfig(JSON.stringify(file), 'json', env, 'conformance config', stateDir).servers;
  const person = (): Promise<unknown> =>
    authorizeServer(server!, { openUrl: approve, timeoutMs: 10_000, log });

  /** Whether `err` says a person must authorize again (worker-side, or `auth`'s own proof listing) where the scenario expects it. */
  const personAgain = (err: unknown): boolean => AUTHORIZE_AGAIN.has(scenario) && /mcp-turns auth/.test((err as Error).message);
  /** Runs `step`; a refusal that needs a person is one more `auth` run, then `step` again. */
  const withPerson = async <T>(step: () => Promise<T>): Promise<T> => {
    try {
      return await step();
    } catch (err) {
      if (!personAgain(err)) throw err;
      console.error(`refused (${(err as Error).message}); authorizing again`);
      await person();
      return step();
    }
  };

  if (server!.oauth?.grant === 'authorization_code') {
    // `auth` ends by listing the tools as a worker would; what that listing is refused for needs one more run.
    await person().catch(async (err: unknown) => {
      if (!personAgain(err)) throw err;
      console.error(`auth's own listing was refused (${(err as Error).message}); authorizing again`);
      await person();
    });
  }
  const pool = new McpPool([server!], log);
  try {
    const call = async (tool: string, args: Record<string, unknown>): Promise<void> => {
      const input = { server: SERVER, tool, arguments: args, toolUseId: `${tool}-call` };
      let out = await pool.callTool(input);
      // Questions for a person come back as a turn gets them; nobody is here to answer, so they are
      // declined and the call sent again with the server's state, as a turn does after its wait.
      for (let round = 0; out.inputRequired && round < MAX_INPUT_ROUNDS; round++) {
        const { requests, requestState } = out.inputRequired;
        out = await pool.callTool({ ...input, inputResponses: inputResponsesOf(requests, false, undefined), ...(requestState !== undefined ? { requestState } : {}) });
      }
      if (out.isError) throw new Error(`${tool} failed: ${JSON.stringify(out.content)}`);
    };
    const listed = await withPerson(async () => {
      const listing = await pool.listTools();
      if (listing.unavailable.length) throw new Error(`server unavailable: ${listing.unavailable[0]!.reason}`);
      return listing;
    });
    const era = pool.status()[0]!.era;
    const modern = protocol !== 'legacy' && process.env.MCP_CONFORMANCE_PROTOCOL_VERSION === '2026-07-28';
    const expected = modern ? 'modern' : 'legacy';
    if (era !== expected) throw new Error(`the connection negotiated the ${era} era, not the ${expected} one`);

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
    } else if (context.toolCalls) {
      for (const { name, arguments: args } of context.toolCalls) {
        // A null is left out, as "not provided": the pool refuses it before the call, since a property
        // that may carry x-mcp-header has one primitive type (`verbose: null` breaks `type: boolean`).
        await call(name, Object.fromEntries(Object.entries(args).filter(([, value]) => value !== null)));
      }
    } else if (scenario.startsWith('auth/')) {
      if (scenario === 'auth/client-credentials-basic') return;
      await withPerson(() => call('test-tool', {}));
    } else {
      // Each is called even when one before it failed (the transcript then says how each went).
      const calls = [];
      for (const tool of listed.tools) {
        calls.push(await call(tool.name, sampleArguments(tool.inputSchema)).then(() => undefined, (err: Error) => err));
      }
      const failed = calls.filter((err) => err !== undefined);
      if (failed.length) throw new Error(failed.map((err) => err.message).join('\n'));
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
