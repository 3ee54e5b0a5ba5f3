/**
 * A Node.js 22 binary for tools that need it (the MCP conformance suite's CLI), while the project
 * itself runs and is tested on the machine's Node (≥ 20).
 *
 * Found in this order: this process when it is Node ≥ 22; `MCP_TURNS_NODE22`; the cache
 * `<state dir>/node22/`; otherwise the pinned Node package for this platform is installed there from
 * the npm registry (about 10 s, once). It is not a devDependency on purpose: a package that
 * provides a `node` binary puts it first on the PATH of every npm script, and the whole test suite
 * would then run on Node 22 instead of the Node the project supports.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { testStateDir } from './settings';

/** The Node release installed when none is at hand. */
export const NODE22_VERSION = '22.23.3';

/** The npm package that ships the Node binary for this platform (the names the `node` package uses). */
function platformPackage(): string {
  if (process.platform === 'win32') throw new Error('set MCP_TURNS_NODE22 to a Node 22 binary on Windows');
  const prefix = process.platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node';
  return `${prefix}-${process.platform}-${process.arch}`;
}

/** The path of a Node ≥ 22 binary, installing the pinned one on first use. */
export function node22(): string {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  if (process.env.MCP_TURNS_NODE22) return process.env.MCP_TURNS_NODE22;
  const dir = path.join(testStateDir(), 'node22', NODE22_VERSION);
  const pkg = platformPackage();
  const binary = path.join(dir, 'node_modules', pkg, 'bin', 'node');
  if (fs.existsSync(binary)) return binary;
  // Installed beside, then moved into place: a run stopped halfway leaves no broken cache.
  const staging = `${dir}.${process.pid}.tmp`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  execFileSync(
    npm,
    [
      'install',
      '--prefix',
      staging,
      '--no-save',
      '--no-package-lock',
      '--no-audit',
      '--no-fund',
      `${pkg}@${NODE22_VERSION}`,
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  fs.rmSync(dir, { recursive: true, force: true });
  fs.renameSync(staging, dir);
  return binary;
}
