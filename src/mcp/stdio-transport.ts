/**
 * A stdio transport that owns its child's whole process group. The SDK's StdioClientTransport kills
 * only the direct child, so launchers like `npx` leave grandchildren behind; this one spawns the
 * server detached (it leads a new process group) and shuts the group down: close stdin, then
 * SIGTERM, then SIGKILL, each to `-pid`; close() resolves once that sequence has run, whatever the
 * group's members do. The server's stderr goes to the log line by line, and its last lines are kept
 * for the error of a server that fails to start; stdout is newline-delimited JSON-RPC.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { ReadBuffer, serializeMessage, type JSONRPCMessage, type Transport } from '@modelcontextprotocol/client';

/** What to spawn, and where its stderr goes. */
export interface StdioSpawnOptions {
  command: string;
  args: string[];
  /** Added to the inherited minimum ({@link INHERITED_ENV}). */
  env: Record<string, string>;
  cwd?: string;
  /** One call per stderr line. */
  onStderr?: (line: string) => void;
  /** Waits of the shutdown sequence. @default { stdinMs: 1000, termMs: 2000 } */
  grace?: { stdinMs: number; termMs: number };
}

/** Variables a server inherits from the worker (as the SDK does); everything else comes from config. */
export const INHERITED_ENV = [
  'HOME',
  'LOGNAME',
  'PATH',
  'SHELL',
  'TERM',
  'USER',
  'LANG',
  'TMPDIR',
  'SYSTEMROOT',
];

/** stderr lines kept for {@link ProcessGroupStdioTransport.stderrTail}. */
const STDERR_KEPT_LINES = 20;
/** A kept stderr line is cut to this many characters. */
const STDERR_LINE_CHARS = 300;
/** After SIGTERM to what is left of a group whose leader has exited, SIGKILL follows this much later. */
const GROUP_TERM_MS = 100;

/** Waits `ms`. Not unref'd: a close() being awaited must keep the process alive until it resolves. */
const wait = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Process groups still running, killed synchronously if the worker exits without closing its pool. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function killGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // the group is gone
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Detached children do not get the terminal's signals: without this a crashed worker orphans them.
  process.once('exit', () => {
    for (const pgid of liveGroups) killGroup(pgid, 'SIGKILL');
  });
}

/** An MCP client transport over a spawned process group. */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child?: ChildProcess;
  private readonly buffer = new ReadBuffer();
  private closing?: Promise<void>;
  private closed = false;
  private exited?: Promise<void>;
  private readonly stderrLines: string[] = [];
  private stderrEnded?: Promise<void>;

  constructor(private readonly opts: StdioSpawnOptions) {}

  /** The server's pid, which is also its process group id. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * The server's stderr stream, while running. With {@link pid} it marks this transport as a stdio
   * one to the SDK's era negotiation: a stdio server that never answers the `server/discover` probe
   * is a legacy server (over HTTP silence is an outage).
   */
  get stderr(): Readable | null {
    return this.child?.stderr ?? null;
  }

  /** The last `lines` non-blank lines the server wrote to stderr (each cut to 300 characters), oldest first. */
  stderrTail(lines: number): string[] {
    return this.stderrLines.slice(-lines);
  }

  /** Resolves once the server's stderr has been read to its end, or after `ms`, whichever is first. */
  async stderrDrained(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.stderrEnded, new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  start(): Promise<void> {
    if (this.child) throw new Error('ProcessGroupStdioTransport already started');
    return new Promise((resolve, reject) => {
      const inherited = Object.fromEntries(
        INHERITED_ENV.flatMap((k) => (process.env[k] !== undefined ? [[k, process.env[k]]] : [])),
      ) as Record<string, string>;
      const child = spawn(this.opts.command, this.opts.args, {
        env: { ...inherited, ...this.opts.env },
        ...(this.opts.cwd ? { cwd: this.opts.cwd } : {}),
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true, // leads its own process group, so shutdown reaches grandchildren too
        windowsHide: true,
      });
      this.child = child;
      this.exited = new Promise((r) => child.once('exit', () => r()));
      child.once('error', (err) => {
        reject(err);
        this.onerror?.(err);
        this.finish();
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) {
          liveGroups.add(child.pid);
          installExitHook();
        }
        resolve();
      });
      // The leader is gone; members of its group may live on (a launcher's children): whoever gets
      // onclose calls close(), which stops the rest of the group.
      child.once('exit', () => this.finish());
      child.stdout!.on('data', (chunk: Buffer) => this.receive(chunk));
      this.forwardStderr(child);
      child.stdin!.on('error', (err) => this.onerror?.(err));
    });
  }

  private receive(chunk: Buffer): void {
    this.buffer.append(chunk);
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch (err) {
        // The bad line is consumed; a server printing non-JSON to stdout is reported, not fatal.
        this.onerror?.(
          new Error(`stdio server wrote a line that is not JSON-RPC: ${(err as Error).message}`),
        );
        continue;
      }
      if (!message) return;
      this.onmessage?.(message);
    }
  }

  private forwardStderr(child: ChildProcess): void {
    let pending = '';
    const emit = (line: string): void => {
      if (!line.trim()) return;
      const text = line.replace(/\r$/, '');
      this.stderrLines.push(text.trim().slice(0, STDERR_LINE_CHARS));
      if (this.stderrLines.length > STDERR_KEPT_LINES) this.stderrLines.shift();
      this.opts.onStderr?.(text);
    };
    this.stderrEnded = new Promise((resolve) => {
      child.stderr!.once('end', () => resolve());
      child.stderr!.once('close', () => resolve());
    });
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      lines.forEach(emit);
      if (pending.length > 64 * 1024) {
        emit(pending);
        pending = '';
      }
    });
    child.stderr!.on('end', () => emit(pending));
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.child?.stdin;
      if (!stdin || stdin.destroyed || !stdin.writable)
        return reject(new Error('stdio server is not running'));
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', () => resolve());
    });
  }

  /** Close stdin, then SIGTERM, then SIGKILL the whole process group; resolves when it is gone. */
  close(): Promise<void> {
    this.closing ??= this.shutdown().finally(() => this.finish());
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    const child = this.child;
    const pgid = child?.pid;
    if (!child || pgid === undefined) return;
    const grace = this.opts.grace ?? { stdinMs: 1000, termMs: 2000 };
    const exited = (ms: number): Promise<boolean> => {
      let timer: NodeJS.Timeout | undefined;
      return Promise.race([
        this.exited!.then(() => true),
        new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms))),
      ]).finally(() => clearTimeout(timer));
    };
    const running = child.exitCode === null && child.signalCode === null;
    if (running) {
      child.stdin?.end();
      if (!(await exited(grace.stdinMs))) {
        killGroup(pgid, 'SIGTERM');
        if (!(await exited(grace.termMs))) killGroup(pgid, 'SIGKILL');
        await exited(grace.termMs);
      }
    }
    // The leader is gone: give the rest of its group the same sequence, then make sure.
    if (killGroup(pgid, 'SIGTERM')) {
      await wait(GROUP_TERM_MS);
      killGroup(pgid, 'SIGKILL');
    }
    liveGroups.delete(pgid);
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    this.onclose?.();
  }
}
