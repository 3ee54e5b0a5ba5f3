/** The worker config the benches run with: server-everything over stdio, plus the bench's own sections. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { McpPool } from '../src/mcp';
import { parseConfig } from '../src/config/config-file';
import { testStateDir } from '../test/support/settings';

/**
 * Writes a worker config file (in a new temporary directory whose name starts with `prefix`) with
 * server-everything as `everything`, and `sections` beside it (`claude` caps, `worker` tuning);
 * answers its path.
 */
export function writeEverythingConfig(prefix: string, sections: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(config, JSON.stringify({ mcp_servers: EVERYTHING_SERVERS, ...sections }));
  return config;
}

/**
 * The `mcp_servers` of the benches: server-everything over stdio, as `everything`. Its
 * `local_activity` is the worker's default (`auto`) unless `BENCH_LOCAL_ACTIVITY` says `true` or `false`.
 */
const EVERYTHING_SERVERS = {
  everything: {
    type: 'stdio',
    command: process.execPath,
    args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
    ...(process.env.BENCH_LOCAL_ACTIVITY ? { local_activity: process.env.BENCH_LOCAL_ACTIVITY === 'auto' ? 'auto' : process.env.BENCH_LOCAL_ACTIVITY === 'true' } : {}),
  },
};

/** An MCP pool of this process with server-everything as `everything` (benches running their worker in-process). */
export function everythingPool(): McpPool {
  return new McpPool(parseConfig(JSON.stringify({ mcp_servers: EVERYTHING_SERVERS }), 'json', process.env, 'bench', testStateDir()).servers);
}
