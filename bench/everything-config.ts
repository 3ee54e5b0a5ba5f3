/** The worker config the benches run with: server-everything over stdio, plus the bench's own sections. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * Writes a worker config file (in a new temporary directory whose name starts with `prefix`) with
 * server-everything as `everything`, and `sections` beside it (`claude` caps, `worker` tuning);
 * answers its path.
 */
export function writeEverythingConfig(prefix: string, sections: Record<string, unknown>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const config = path.join(dir, 'config.json');
  const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  fs.writeFileSync(
    config,
    JSON.stringify({
      mcp_servers: { everything: { type: 'stdio', command: process.execPath, args: [everything, 'stdio'] } },
      ...sections,
    }),
  );
  return config;
}
