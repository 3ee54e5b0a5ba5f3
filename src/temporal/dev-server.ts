/**
 * Starts the Temporal dev server (`temporal server start-dev`) from the resolved CLI, with a persistent
 * SQLite file, the Web UI, mcp-turns' search attributes registered, and the dynamic config that
 * keeps a one-shard server from throttling its own task dispatch (see dev-server-tuning.ts).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { searchAttributeCliArgs } from '../core/search-attributes';
import { registerMissingSearchAttributes } from './search-attribute-registration';
import { resolveTemporalCli } from './temporal-cli';
import { devServerDynamicConfigArgs, devServerEnv } from './dev-server-tuning';
import { claimDatabase, type DatabaseClaim } from './database-holder';

export interface DevServerOptions {
  /** gRPC port. @default 7233 */
  port?: number;
  /** Web UI port. @default the gRPC port + 1000 (the Temporal CLI's own pairing: 7233 → 8233) */
  uiPort?: number;
  /** SQLite file; undefined = in-memory (tests). */
  dbFile?: string;
  /** @default 127.0.0.1 */
  ip?: string;
  /** @default "default" */
  namespace?: string;
  /** Path of the `temporal` binary; resolved (and installed if needed) when absent. */
  cliPath?: string;
  /** The state directory whose CLI cache is used when `cliPath` is not given (one of the two is needed). */
  stateDir?: string;
  /** The CLI the settings name (TEMPORAL_CLI_PATH), tried first when `cliPath` is not given. */
  configuredCliPath?: string;
  /** Where the server's own log lines go. @default discarded */
  onLog?: (line: string) => void;
  /** How long to wait for the server to answer. @default 60 s */
  startTimeoutMs?: number;
  /** More `temporal server start-dev` arguments. */
  extraArgs?: string[];
  /** Register mcp-turns' search attributes at start. @default true */
  searchAttributes?: boolean;
  /**
   * Run the server in its own process group with its output appended to `logFile`, so it keeps
   * running after this process exits (a later command reuses it). @default attached: output to `onLog`
   */
  background?: { logFile: string };
}

export interface DevServer {
  address: string;
  uiUrl: string;
  pid: number | undefined;
  /** Resolves with the exit code when the process ends. */
  exited: Promise<number | null>;
  stop(): Promise<void>;
}

export class DevServerError extends Error {
  override name = 'DevServerError';
}

/**
 * What a TCP connection to host:port meets: `open` (accepted), `refused` (nothing listens: on this
 * machine that is known at once, where a gRPC connect keeps trying until its deadline), or
 * `unknown` (a timeout or another error). With several addresses for the host (localhost: ::1 and
 * 127.0.0.1), it is refused only when every one refuses.
 */
function probePort(host: string, port: number, timeoutMs: number): Promise<'open' | 'refused' | 'unknown'> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (found: 'open' | 'refused' | 'unknown'): void => {
      socket.destroy();
      resolve(found);
    };
    socket.setTimeout(timeoutMs, () => done('unknown'));
    socket.once('connect', () => done('open'));
    socket.once('error', (err: NodeJS.ErrnoException & { errors?: NodeJS.ErrnoException[] }) => {
      const codes = err.errors?.length ? err.errors.map((e) => e.code) : [err.code];
      done(codes.every((code) => code === 'ECONNREFUSED') ? 'refused' : 'unknown');
    });
  });
}

/** True when a TCP connection to host:port is accepted. */
export async function portIsOpen(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return (await probePort(host, port, timeoutMs)) === 'open';
}

/** True when a TCP connection to host:port is refused: nothing listens there. */
export async function connectionRefused(host: string, port: number, timeoutMs = 1000): Promise<boolean> {
  return (await probePort(host, port, timeoutMs)) === 'refused';
}

/** True when a Temporal frontend answers gRPC health checks at the address. */
export async function temporalAnswers(address: string, timeoutMs = 3000): Promise<boolean> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, connectTimeout: timeoutMs });
    const res = await connection.healthService.check({}, );
    return res.status === 1; // SERVING
  } catch {
    return false;
  } finally {
    await connection?.close().catch(() => undefined);
  }
}

function checkDbWritable(dbFile: string): void {
  const dir = path.dirname(path.resolve(dbFile));
  try {
    fs.mkdirSync(dir, { recursive: true });
    fs.accessSync(dir, fs.constants.W_OK);
    if (fs.existsSync(dbFile)) fs.accessSync(dbFile, fs.constants.W_OK | fs.constants.R_OK);
  } catch (err) {
    throw new DevServerError(`database file ${dbFile} is not writable: ${(err as Error).message}`);
  }
}

/** True once the process has ended (Node sets its exit code or signal then). */
function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

interface Launched {
  child: ChildProcess;
  exited: Promise<number | null>;
}

/**
 * Why a server stopped during start-up, from its output: its panic or first fatal or error log line
 * (the server logs JSON), else its last lines.
 */
export function startupFailureReason(lines: string[]): string {
  for (const line of lines) {
    const text = line.trim();
    if (/^(panic|fatal error|Error):/.test(text)) return text;
    if (!text.startsWith('{')) continue;
    try {
      const entry = JSON.parse(text) as { level?: string; msg?: string; error?: string };
      if (entry.level && ['fatal', 'panic', 'dpanic', 'error'].includes(entry.level) && entry.msg) {
        return entry.error ? `${entry.msg}: ${entry.error}` : entry.msg;
      }
    } catch {
      // not a log entry
    }
  }
  return lines.slice(-5).join(' | ') || 'no output';
}

/** Spawns the server and waits until it answers, it exits (`exitedWith`: why), or the start timeout passes. */
async function launchDevServer(cli: string, args: string[], address: string, opts: DevServerOptions): Promise<Launched | { exitedWith: string }> {
  const lines: string[] = [];
  let child: ChildProcess;
  let logStart = 0;
  if (opts.background) {
    fs.mkdirSync(path.dirname(opts.background.logFile), { recursive: true });
    logStart = fs.existsSync(opts.background.logFile) ? fs.statSync(opts.background.logFile).size : 0;
    const log = fs.openSync(opts.background.logFile, 'a');
    child = spawn(cli, args, { stdio: ['ignore', log, log], env: devServerEnv(), detached: true });
    fs.closeSync(log);
    child.unref();
  } else {
    child = spawn(cli, args, { stdio: ['ignore', 'pipe', 'pipe'], env: devServerEnv() });
    const onData = (buf: Buffer): void => {
      for (const line of buf.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        if (lines.length < 500) lines.push(line);
        opts.onLog?.(line);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
  }
  const output = (): string[] => {
    if (!opts.background) return lines;
    const fd = fs.openSync(opts.background.logFile, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      const buf = Buffer.alloc(Math.min(size - logStart, 1024 * 1024));
      fs.readSync(fd, buf, 0, buf.length, logStart);
      return buf.toString('utf8').split('\n').filter((l) => l.trim());
    } finally {
      fs.closeSync(fd);
    }
  };
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + (opts.startTimeoutMs ?? 60_000);
  while (!(await temporalAnswers(address, 1000))) {
    if (hasExited(child)) return { exitedWith: startupFailureReason(output()) };
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new DevServerError(`temporal server did not answer on ${address} in time: ${startupFailureReason(output())}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, exited };
}

function stateDirOf(opts: DevServerOptions): string {
  if (!opts.stateDir) throw new Error('startDevServer needs cliPath or stateDir (where the project keeps its Temporal CLI)');
  return opts.stateDir;
}

/**
 * Starts the dev server and waits until it answers. Fails clearly if a port is taken, and with
 * DatabaseHeldError (database-holder.ts) when another live server holds the database.
 */
export async function startDevServer(opts: DevServerOptions = {}): Promise<DevServer> {
  const ip = opts.ip ?? '127.0.0.1';
  const port = opts.port ?? 7233;
  const uiPort = opts.uiPort ?? port + 1000;
  const address = `${ip}:${port}`;
  if (opts.dbFile) checkDbWritable(opts.dbFile);
  for (const [what, p] of [['gRPC', port], ['UI', uiPort]] as const) {
    if (await portIsOpen(ip, p)) throw new DevServerError(`${what} port ${p} on ${ip} is already in use`);
  }
  // A database is one server's at a time: claimed before anything is spawned, else DatabaseHeldError.
  const claim = opts.dbFile ? claimDatabase(opts.dbFile, address) : undefined;
  try {
    return await startClaimed(opts, { ip, port, uiPort, address }, claim);
  } catch (err) {
    claim?.release();
    throw err;
  }
}

async function startClaimed(
  opts: DevServerOptions,
  { ip, port, uiPort, address }: { ip: string; port: number; uiPort: number; address: string },
  claim: DatabaseClaim | undefined,
): Promise<DevServer> {
  const cli = opts.cliPath ?? resolveTemporalCli({ ...(opts.onLog ? { log: opts.onLog } : {}), stateDir: stateDirOf(opts), ...(opts.configuredCliPath ? { cliPath: opts.configuredCliPath } : {}) }).path;
  const args = [
    'server', 'start-dev',
    '--ip', ip,
    '--port', String(port),
    '--ui-port', String(uiPort),
    '--namespace', opts.namespace ?? 'default',
    '--log-level', 'warn',
    ...(opts.dbFile ? ['--db-filename', opts.dbFile] : []),
    ...(opts.searchAttributes === false ? [] : searchAttributeCliArgs()),
    ...devServerDynamicConfigArgs(),
    ...(opts.extraArgs ?? []),
  ];
  // The server picks its internal ports itself, and another process can take one between its pick
  // and its bind: that start fails at once, and a second start picks other ports.
  let launched = await launchDevServer(cli, args, address, opts);
  if ('exitedWith' in launched) {
    opts.onLog?.(`temporal server exited during start-up (${launched.exitedWith}); starting it once more`);
    launched = await launchDevServer(cli, args, address, opts);
    if ('exitedWith' in launched) throw new DevServerError(`temporal server exited during start-up: ${launched.exitedWith}`);
  }
  const { child, exited } = launched;
  if (child.pid !== undefined) claim?.heldBy(child.pid);
  void exited.then(() => claim?.release());
  // A database an earlier version made lacks the attributes added since: the flags above register only in a new one.
  if (opts.searchAttributes !== false && opts.dbFile) {
    const connection = await Connection.connect({ address });
    try {
      const added = await registerMissingSearchAttributes(connection, opts.namespace ?? 'default');
      if (added.length) opts.onLog?.(`registered search attributes ${added.join(', ')} (the database predates them)`);
    } catch (err) {
      opts.onLog?.(`could not register mcp-turns' search attributes: ${(err as Error).message}`);
    } finally {
      await connection.close();
    }
  }
  return {
    address,
    uiUrl: `http://${ip === '0.0.0.0' ? '127.0.0.1' : ip}:${uiPort}`,
    pid: child.pid,
    exited,
    async stop() {
      if (hasExited(child)) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A TCP port that was free a moment ago (the OS picks it). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
