/**
 * A stdio transport that owns its child process group. The SDK's StdioClientTransport kills only
 * the direct child, so launchers like `npx` leave grandchildren behind; this one spawns the server
 * as a process-group leader and shuts the whole group down: close stdin, then SIGTERM, then SIGKILL.
 * The server's stderr goes to the log, tagged with the server name.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';

export interface StdioSpawn {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  onStderr?: (line: string) => void;
}

/** Environment a server inherits when its config names no value (as the SDK does). */
const INHERITED = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'TMPDIR', 'NODE_OPTIONS'];

export class GroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private child?: ChildProcess;
  private readonly buffer = new ReadBuffer();
  private closed = false;

  constructor(private readonly opts: StdioSpawn) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const base = Object.fromEntries(INHERITED.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]!]));
      const child = spawn(this.opts.command, this.opts.args, {
        env: { ...base, ...this.opts.env },
        cwd: this.opts.cwd,
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true, // its own process group, so shutdown reaches grandchildren too
      });
      this.child = child;
      child.once('error', (err) => {
        reject(err);
        this.onerror?.(err);
      });
      child.once('spawn', () => resolve());
      child.once('exit', () => this.finish());
      child.stdout!.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (err) {
            this.onerror?.(err as Error);
            continue;
          }
          if (!message) break;
          this.onmessage?.(message);
        }
      });
      let pending = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        pending += chunk.toString('utf8');
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) if (line.trim()) this.opts.onStderr?.(line);
      });
      child.stdin!.on('error', (err) => this.onerror?.(err));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed) return reject(new Error('stdio server is not running'));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Close stdin, then SIGTERM, then SIGKILL the whole process group. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return this.finish();
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    const waitFor = (ms: number): Promise<boolean> =>
      Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms).unref())]);
    child.stdin?.end();
    if (!(await waitFor(1000))) {
      this.killGroup('SIGTERM');
      if (!(await waitFor(2000))) {
        this.killGroup('SIGKILL');
        await waitFor(2000);
      }
    }
    // The leader may be gone while others in its group live on.
    this.killGroup('SIGKILL');
    this.finish();
  }

  private killGroup(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (!pid) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // group already gone
    }
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
