import os from 'node:os';
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

/** The installed package's version (its package.json). */
export function packageVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}

/** True when the package runs from an installed copy (`…/node_modules/mcp-turns`), not from a clone. */
export function isInstalledPackage(root = packageRoot()): boolean {
  return root.split(path.sep).includes('node_modules');
}

/**
 * The per-user state directory of the platform: `$XDG_STATE_HOME/mcp-turns` (default
 * `~/.local/state/mcp-turns`) on Linux and other Unixes, `~/Library/Application Support/mcp-turns`
 * on macOS, `%LOCALAPPDATA%\mcp-turns` on Windows.
 */
export function userStateDir(
  env: NodeJS.ProcessEnv,
  platform: NodeJS.Platform = process.platform,
): string {
  const home = os.homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'mcp-turns');
  if (platform === 'win32')
    return path.join(env.LOCALAPPDATA ?? path.join(home, 'AppData', 'Local'), 'mcp-turns');
  return path.join(env.XDG_STATE_HOME || path.join(home, '.local', 'state'), 'mcp-turns');
}

/**
 * Where mcp-turns keeps machine-local state (the Temporal CLI cache, the dev server's SQLite file
 * and log, OAuth tokens): `MCP_TURNS_HOME`; else `.mcp-turns/` in
 * a clone of the repository (git-ignored); else, when running from an installed package, the
 * per-user directory ({@link userStateDir}), so nothing is written into `node_modules`, where the
 * next install would wipe it. The CLI resolves it once (its `--state-dir` wins) and passes it down
 * (src/cli/cli-settings.ts); the `dir` parameters below default to this.
 */
export function stateDir(env: NodeJS.ProcessEnv): string {
  if (env.MCP_TURNS_HOME) return path.resolve(env.MCP_TURNS_HOME);
  const root = packageRoot();
  return isInstalledPackage(root) ? userStateDir(env) : path.join(root, '.mcp-turns');
}

/** The dev server's database when none is named (`server` without `--db`, `run`, `batch`, `demo`). */
export function defaultDevServerDb(dir: string): string {
  return path.join(dir, 'temporal.db');
}
