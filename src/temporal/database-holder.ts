/**
 * Which dev server holds a SQLite database. A database is held by one Temporal dev server at a time:
 * a second server on the same file fights the first for its lock (SQLITE_BUSY) and each sees part of
 * the other's work. So every start claims the database first, and a database a live server holds is
 * refused with the line that names that server and its address.
 *
 * The claim is a file next to the database, `<db>.server.json`, created exclusively, so two commands
 * starting servers at the same moment cannot both get it. It names the command starting the server,
 * then the server itself. A claim whose process has ended is stale and taken over. On Linux a running
 * `temporal server start-dev` whose `--db-filename` is the file holds it too, claim or not (a server
 * started by hand, or by another copy of mcp-turns).
 */
import fs from 'node:fs';
import path from 'node:path';
import { processAlive } from './process-alive';
import { devServerCommandLine, devServerRuns, processIds } from './dev-server-process';

export interface DatabaseHolder {
  pid: number;
  /** host:port of its gRPC frontend, when known. */
  address?: string;
  /** True while the command that claimed it is still starting the server. */
  starting?: boolean;
}

/** The database is held by another server: the message names it and its address. */
export class DatabaseHeldError extends Error {
  override name = 'DatabaseHeldError';
  constructor(
    readonly dbFile: string,
    readonly holder: DatabaseHolder,
  ) {
    const server = holder.starting
      ? `a Temporal dev server being started${holder.address ? ` on ${holder.address}` : ''} (by pid ${holder.pid})`
      : `the Temporal dev server on ${holder.address ?? 'an unknown port'} (pid ${holder.pid})`;
    super(`database ${dbFile} is held by ${server}`);
  }
}

function claimFile(dbFile: string): string {
  return `${dbFile}.server.json`;
}

/** The holder a claim file names, when its process still runs. */
function claimHolder(dbFile: string): DatabaseHolder | undefined {
  let claim: DatabaseHolder;
  try {
    claim = JSON.parse(fs.readFileSync(claimFile(dbFile), 'utf8')) as DatabaseHolder;
  } catch {
    return undefined; // none, or half-written by a claim under way: the process scan still looks
  }
  if (typeof claim.pid !== 'number') return undefined;
  return (claim.starting ? processAlive(claim.pid) : devServerRuns(claim.pid)) ? claim : undefined;
}

/** A running `temporal server start-dev` on this database (Linux /proc), with the address it listens on. */
function runningServerOn(dbFile: string): DatabaseHolder | undefined {
  for (const pid of processIds()) {
    const server = devServerCommandLine(pid);
    if (server?.dbFile === dbFile) return { pid: Number(pid), address: server.address };
  }
  return undefined;
}

/** The live server (or server start) holding `dbFile`, if any. */
export function databaseHolder(dbFile: string): DatabaseHolder | undefined {
  const file = path.resolve(dbFile);
  return claimHolder(file) ?? runningServerOn(file);
}

/** Fails with {@link DatabaseHeldError} when a live server holds `dbFile`. */
export function assertDatabaseFree(dbFile: string): void {
  const holder = databaseHolder(dbFile);
  if (holder) throw new DatabaseHeldError(path.resolve(dbFile), holder);
}

export interface DatabaseClaim {
  /** The server started: the claim names its process from now on, which keeps it after this command exits. */
  heldBy(serverPid: number): void;
  /** Gives the database up (the server stopped, or never started). */
  release(): void;
}

/**
 * Claims `dbFile` for a server about to start at `address`, or fails with {@link DatabaseHeldError}
 * naming the live holder. A stale claim (its process ended) is taken over.
 */
export function claimDatabase(dbFile: string, address: string): DatabaseClaim {
  const file = path.resolve(dbFile);
  const claim = claimFile(file);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const write = (holder: DatabaseHolder, flag: 'wx' | 'w'): void => fs.writeFileSync(claim, JSON.stringify(holder) + '\n', { flag });
  const mine: DatabaseHolder = { pid: process.pid, address, starting: true };
  for (let attempt = 0; ; attempt++) {
    const running = runningServerOn(file);
    if (running) throw new DatabaseHeldError(file, running);
    try {
      write(mine, 'wx');
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = claimHolder(file);
    if (holder) throw new DatabaseHeldError(file, holder);
    if (attempt > 0) throw new Error(`database ${file} is being claimed by another command starting a server (${claim}): try again in a moment`);
    fs.rmSync(claim, { force: true }); // stale: its process has ended
  }
  let pid = process.pid;
  return {
    heldBy(serverPid) {
      pid = serverPid;
      write({ pid: serverPid, address }, 'w');
    },
    release() {
      const holder = claimHolder(file);
      if (!holder || holder.pid === pid) fs.rmSync(claim, { force: true });
    },
  };
}
