/**
 * What mcp-turns knows about the dev servers it started on this machine: one small file per gRPC
 * port in the state directory, so a later command finds the server's Web UI, database and log, and
 * `mcp-turns server --stop` finds its process. A record whose process is gone is ignored and removed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { processAlive } from './process-alive';
import { stateDir } from './project-paths';

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

function recordFile(port: number, dir: string): string {
  return path.join(dir, 'dev-servers', `${port}.json`);
}

export function writeDevServerRecord(record: DevServerRecord, dir = stateDir()): void {
  const port = splitAddress(record.address)?.port;
  if (port === undefined) return;
  const file = recordFile(port, dir);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
}

/** The record of the live dev server mcp-turns started at this loopback address, if any. */
export function readDevServerRecord(address: string, dir = stateDir()): DevServerRecord | undefined {
  if (!isLoopbackAddress(address)) return undefined;
  const file = recordFile(splitAddress(address)!.port, dir);
  let record: DevServerRecord;
  try {
    record = JSON.parse(fs.readFileSync(file, 'utf8')) as DevServerRecord;
  } catch {
    return undefined;
  }
  if (processAlive(record.pid)) return record;
  fs.rmSync(file, { force: true });
  return undefined;
}

/** Forgets the record of the server at this address (it was stopped). */
export function removeDevServerRecord(address: string, dir = stateDir()): void {
  const port = splitAddress(address)?.port;
  if (port !== undefined) fs.rmSync(recordFile(port, dir), { force: true });
}
