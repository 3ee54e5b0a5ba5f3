/** Runs the real `mcp-turns` CLI (bin/mcp-turns.js → dist/) as a user would. */
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { testTemporalCli } from './temporal-cli';

export const BIN = path.resolve(__dirname, '..', '..', 'bin', 'mcp-turns.js');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Wall time to its exit. */
  ms: number;
}

/** Runs a command to its end with exactly `env`; rejects, after killing it, when it outlasts `timeoutMs`. */
export function runProcess(command: string, args: string[], opts: { env: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string }): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: opts.env, cwd: opts.cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${path.basename(command)} ${args.join(' ')} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 60_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** Runs the CLI with this process's environment and `env` over it. */
export function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {}): Promise<CliRun> {
  return runProcess(process.execPath, [BIN, ...args], { ...opts, env: { ...process.env, ...opts.env } });
}

/** Starts a long-running CLI command and resolves once `ready` matches its stdout. */
export function startCli(
  args: string[],
  ready: RegExp,
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<{ child: ChildProcess; output: () => string; exited: Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...opts.env } });
    let out = '';
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`mcp-turns ${args.join(' ')} not ready in time:\n${out}`));
    }, opts.timeoutMs ?? 60_000);
    const onData = (d: Buffer): void => {
      out += d.toString();
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve({ child, output: () => out, exited });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      if (!ready.test(out)) reject(new Error(`mcp-turns ${args.join(' ')} exited (${code}) before ready:\n${out}`));
    });
  });
}

/**
 * The environment of a CLI run with its own state directory under `home` (dev server records,
 * database, log), the Temporal CLI already installed, and Claude at `claudeUrl` (the stub).
 */
export function ownStateEnv(home: string, claudeUrl: string): NodeJS.ProcessEnv {
  return {
    MCP_TURNS_HOME: path.join(home, 'state'),
    TEMPORAL_CLI_PATH: testTemporalCli().path,
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: claudeUrl,
  };
}
