/** A real `mcp-turns worker` process for tests that treat the worker as a separate program. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { BIN } from './cli';

export async function startWorkerProcess(opts: {
  config: Record<string, unknown>;
  /** Where the config file is written (its relative paths resolve there). @default a new temporary directory */
  configDir?: string;
  taskQueue: string;
  stubUrl: string;
  extraArgs?: string[];
  env?: NodeJS.ProcessEnv;
  /** Given: the worker's stderr goes here instead of this process's. */
  onStderr?: (text: string) => void;
}): Promise<ChildProcess> {
  const dir = opts.configDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-worker-'));
  const config = path.join(dir, 'config.json');
  fs.writeFileSync(config, JSON.stringify(opts.config));
  const child = spawn(process.execPath, [BIN, 'worker', '--config', config, '--task-queue', opts.taskQueue, '--log-level', 'WARN', ...(opts.extraArgs ?? [])], {
    env: {
      ...process.env,
      TEMPORAL_ADDRESS: process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS,
      ANTHROPIC_API_KEY: 'test',
      ANTHROPIC_BASE_URL: opts.stubUrl,
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', opts.onStderr ? 'pipe' : 'inherit'],
  });
  if (opts.onStderr) child.stderr!.on('data', (d: Buffer) => opts.onStderr!(d.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('mcp-turns worker on') && resolve());
    child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready`)));
  });
  return child;
}
