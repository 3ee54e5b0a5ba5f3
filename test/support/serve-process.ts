/** `mcp-turns serve` as its own process (the built CLI) against the test dev server, on a free port. */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');

export interface ServeProcess {
  /** `http://127.0.0.1:<port>` */
  url: string;
  child: ChildProcess;
}

/**
 * Starts `mcp-turns serve --port 0 --address <test server> --task-queue <taskQueue>` with `args`
 * after them and `env` over this process's environment; resolves once it says where it listens.
 */
export function startServeProcess(taskQueue: string, env: NodeJS.ProcessEnv, args: string[] = []): Promise<ServeProcess> {
  const child = spawn(
    process.execPath,
    [path.join(ROOT, 'bin', 'mcp-turns.js'), 'serve', '--port', '0', '--address', process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!, '--task-queue', taskQueue, ...args],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /serve on (http:\/\/\S+) /.exec(err);
      if (m) resolve({ url: m[1]!, child });
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}
