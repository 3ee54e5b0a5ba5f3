/**
 * What mcp-turns knows about the dev servers it started on this machine: one small file per gRPC
 * port in the state directory, so a later command finds the server's Web UI, database and log, and
 * `mcp-turns server --stop` finds its process.
 *
 * A record outlives its server: when the server dies (a crash, SIGKILL), the record still says which
 * database lived at that port, so a later command names the server that is down and how to start it
 * instead of starting another one there on another database. A record is removed only by
 * `mcp-turns server --stop`, a clean exit of `mcp-turns server` (or of the demo's own server), and
 * replaced when a server is started on its port.
 */
import fs from 'node:fs';
import path from 'node:path';
import { devServerCommandLine, devServerRuns, processIds } from './dev-server-process';

export interface DevServerRecord {
  pid: number;
  /** host:port of the gRPC frontend. */
  address: string;
  uiUrl: string;
  dbFile?: string;
  /** Where a server started in the background writes its output. */
  logFile?: string;
  startedAt: string;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '0.0.0.0']);

/** host and port of `host:port` (IPv6 in brackets allowed); undefined when it is not that shape. */
export function splitAddress(address: string): { host: string; port: number } | undefined {
  const match = /^(?:[a-z]+:\/\/)?\[?([^\]/]+?)\]?:(\d+)$/i.exec(address.trim());
  return match ? { host: match[1]!.toLowerCase(), port: Number(match[2]) } : undefined;
}

/** True for an address on this machine (a dev server mcp-turns could start or has started). */
export function isLoopbackAddress(address: string): boolean {
  const parts = splitAddress(address);
  return !!parts && LOOPBACK_HOSTS.has(parts.host);
}

/** The Web UI port of a recorded server. */
export function uiPortOf(record: Pick<DevServerRecord, 'uiUrl'>): number | undefined {
  const port = /:(\d+)\/?$/.exec(record.uiUrl)?.[1];
  return port === undefined ? undefined : Number(port);
}

function recordFile(port: number, dir: string): string {
  return path.join(dir, 'dev-servers', `${port}.json`);
}

export function writeDevServerRecord(record: DevServerRecord, dir: string): void {
  const port = splitAddress(record.address)?.port;
  if (port === undefined) return;
  const file = recordFile(port, dir);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
}

/**
 * The record of the dev server mcp-turns last started at this loopback address, whether or not it
 * still runs ({@link recordedServerRuns} tells).
 */
export function lastDevServerRecord(address: string, dir: string): DevServerRecord | undefined {
  if (!isLoopbackAddress(address)) return undefined;
  try {
    return JSON.parse(
      fs.readFileSync(recordFile(splitAddress(address)!.port, dir), 'utf8'),
    ) as DevServerRecord;
  } catch {
    return undefined;
  }
}

/**
 * True while the recorded server's process runs. On Linux a process by that id whose command line
 * is not a Temporal dev server's does not count: the id was given to another program.
 */
export function recordedServerRuns(record: DevServerRecord): boolean {
  return devServerRuns(record.pid);
}

/** The record of the live dev server mcp-turns started at this loopback address, if any. */
export function readDevServerRecord(address: string, dir: string): DevServerRecord | undefined {
  const record = lastDevServerRecord(address, dir);
  return record && recordedServerRuns(record) ? record : undefined;
}

/** Forgets the record of the server at this address (it was stopped). */
export function removeDevServerRecord(address: string, dir: string): void {
  const port = splitAddress(address)?.port;
  if (port !== undefined) fs.rmSync(recordFile(port, dir), { force: true });
}

/** The inodes of the sockets listening on this TCP port, from Linux's /proc/net/tcp and tcp6. */
function listeningSocketInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st … inode; st 0A is LISTEN, addresses are HEXIP:HEXPORT.
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] !== '0A') continue;
      if (parseInt(fields[1]!.split(':').pop()!, 16) === port) inodes.add(fields[9]!);
    }
  }
  return inodes;
}

/** True when the process holds one of these sockets open. */
function holdsSocket(pid: string, inodes: Set<string>): boolean {
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false; // gone, or another user's
  }
  return fds.some((fd) => {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      return inode !== undefined && inodes.has(inode);
    } catch {
      return false;
    }
  });
}

export interface ListeningDevServer {
  pid: number;
  /** Its SQLite file, absolute; undefined: it keeps its data in memory. */
  dbFile?: string;
}

/**
 * The Temporal dev server listening on this port, found without a record: the process holding the
 * listening socket (Linux /proc) and the `--db-filename` of its command line. Undefined when that
 * cannot be told: another OS, another user's process, or a listener that is not a dev server.
 */
export function listeningDevServer(port: number): ListeningDevServer | undefined {
  const inodes = listeningSocketInodes(port);
  if (!inodes.size) return undefined;
  const pid = processIds().find((p) => holdsSocket(p, inodes));
  const server = pid === undefined ? undefined : devServerCommandLine(pid);
  return server && { pid: Number(pid), ...(server.dbFile ? { dbFile: server.dbFile } : {}) };
}
