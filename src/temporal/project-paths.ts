import path from 'node:path';
import fs from 'node:fs';

/** The package root (where package.json lives), whether running from src/ via swc or from dist/. */
export function packageRoot(): string {
  let dir = __dirname;
  for (;;) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`mcp-turns: cannot find package.json above ${__dirname}`);
    dir = parent;
  }
}

/**
 * Where mcp-turns keeps machine-local state (the Temporal CLI cache, the dev server's SQLite file):
 * `MCP_TURNS_HOME`, else `.mcp-turns/` in the package root (git-ignored).
 */
export function stateDir(): string {
  return process.env.MCP_TURNS_HOME ?? path.join(packageRoot(), '.mcp-turns');
}
