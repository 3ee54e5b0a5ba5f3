/**
 * Reaching the Temporal server from a CLI command, and the one line that says why not. On this
 * machine a port nobody listens on is known at once (a refused TCP connection), so the command fails
 * in well under a second instead of waiting out the gRPC connect deadline; the line names the dev
 * server that mcp-turns recorded at that port, if any, and the exact command that starts it again.
 */
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import { temporalTarget, type ConnectOverrides } from '../temporal/connection';
import { openClient } from '../client/connect-client';
import { connectionRefused, DevServerError } from '../temporal/dev-server';
import { assertDatabaseFree, DatabaseHeldError } from '../temporal/database-holder';
import {
  isLoopbackAddress,
  lastDevServerRecord,
  recordedServerRuns,
  splitAddress,
  uiPortOf,
  type DevServerRecord,
} from '../temporal/dev-server-record';
import { CliError } from './cli-error';
import { EXIT } from './exit-codes';
import { dataConverterOf } from '../data-converter/data-converter';
import type { Settings } from '../config/settings';

/** `s` as one shell word: quoted only when it needs to be. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The `mcp-turns server …` that starts the recorded server again: its address, Web UI port and database. */
export function restartCommand(record: Pick<DevServerRecord, 'address' | 'uiUrl' | 'dbFile'>): string {
  const { host, port } = splitAddress(record.address)!;
  const uiPort = uiPortOf(record) ?? port + 1000;
  return [
    `mcp-turns server --port ${port}`,
    ...(host === '127.0.0.1' ? [] : [`--ip ${shellWord(host)}`]),
    ...(uiPort === port + 1000 ? [] : [`--ui-port ${uiPort}`]),
    ...(record.dbFile ? [`--db ${shellWord(record.dbFile)}`] : []),
  ].join(' ');
}

/** "(database /x.db, pid N)" */
function serverIdentity(record: DevServerRecord): string {
  return `(database ${record.dbFile ?? 'none: in memory'}, pid ${record.pid})`;
}

/**
 * The line for a recorded dev server that does not answer: not running, with the command that
 * starts it; or running but not answering yet (starting up, or stuck: its log says).
 */
export function recordedServerDownLine(record: DevServerRecord): string {
  const server = `the Temporal dev server on ${record.address} ${serverIdentity(record)}`;
  if (recordedServerRuns(record))
    return `${server} runs but does not answer yet: try again in a moment${record.logFile ? ` (its log: ${record.logFile})` : ''}`;
  return `${server} is not running: start it with \`${restartCommand(record)}\``;
}

/** The line for a loopback address nobody listens on: the server recorded there, else how to start one. */
function nothingListensLine(address: string, stateDir: string): string {
  const record = lastDevServerRecord(address, stateDir);
  if (record) return recordedServerDownLine(record);
  const { host, port } = splitAddress(address)!;
  const flags = [
    ...(port === 7233 ? [] : [`--port ${port}`]),
    ...(['127.0.0.1', 'localhost'].includes(host) ? [] : [`--ip ${shellWord(host)}`]),
  ];
  return `cannot reach Temporal at ${address}: nothing listens there; start a server with \`${['mcp-turns server', ...flags].join(' ')}\``;
}

/** True when the address is on this machine and refuses connections (see the file comment). */
export async function nothingListensAt(address: string): Promise<boolean> {
  const parts = isLoopbackAddress(address) ? splitAddress(address) : undefined;
  return !!parts && (await connectionRefused(parts.host, parts.port));
}

/**
 * Fails at once, with the line that says how to start a server, when nothing listens at a local
 * `address` (the dev server recorded in `stateDir` named).
 */
export async function failIfNothingListens(address: string, stateDir: string): Promise<void> {
  if (await nothingListensAt(address)) throw new CliError(nothingListensLine(address, stateDir), EXIT.failed);
}

/**
 * The line for a dev server that cannot start at `address` because another live server holds the
 * database it would use: that server, its address, and how to stop it (`mcp-turns server --stop` when
 * mcp-turns recorded it in `stateDir`, else its process id). `orElse` adds the command's own way out.
 */
export function databaseHeldLine(err: DatabaseHeldError, address: string, stateDir: string, orElse?: string): string {
  const { holder } = err;
  const port = holder.address ? splitAddress(holder.address)?.port : undefined;
  const recorded = holder.address && lastDevServerRecord(holder.address, stateDir)?.pid === holder.pid;
  const stop = recorded && port !== undefined ? `mcp-turns server --stop --port ${port}` : `kill ${holder.pid}`;
  const use = holder.address ? `use that server (--address ${holder.address})` : 'use that server';
  return `cannot start a Temporal dev server on ${address}: ${err.message}; ${use}${orElse ? `, ${orElse}` : ''}, or stop it first (\`${stop}\`)`;
}

/** Fails (exit 1) with the line of {@link databaseHeldLine} when a live server holds `dbFile`. */
export function refuseHeldDatabase(dbFile: string, address: string, stateDir: string, orElse?: string): void {
  try {
    assertDatabaseFree(dbFile);
  } catch (err) {
    throw devServerStartFailure(err, address, stateDir, orElse);
  }
}

/** A failure to start a dev server at `address` as the CLI's one line (exit 1). */
export function devServerStartFailure(err: unknown, address: string, stateDir: string, orElse?: string): unknown {
  if (err instanceof DatabaseHeldError) return new CliError(databaseHeldLine(err, address, stateDir, orElse), EXIT.failed);
  if (err instanceof DevServerError) return new CliError(err.message, EXIT.failed);
  return err;
}

/**
 * Whether a command may start a dev server with database `dbFile` at `address`, where no Temporal
 * answers. The rules: a database is one live server's at a time (database-holder.ts), so one another
 * server holds is refused with the line naming that server and its address; and never on top of
 * another database: the server mcp-turns last recorded at `address` holds its workflows (and any
 * batch under way) in its own database, and one started on another would find none of them and run
 * that work again. So when the recorded server used another database, or runs but does not answer
 * yet, the command fails with the line that names it and how to start it. With no record, or a
 * record of a server on the same database, starting here loses nothing. Records are those in `dir`
 * (the state directory). Returns the record of the server that ran here, to start it again.
 */
export function assertMayStartDevServer(address: string, dbFile: string, dir: string): DevServerRecord | undefined {
  const record = lastDevServerRecord(address, dir);
  const sameDatabase = !!record?.dbFile && path.resolve(record.dbFile) === path.resolve(dbFile);
  if (record && (!sameDatabase || recordedServerRuns(record))) throw new CliError(recordedServerDownLine(record), EXIT.failed);
  refuseHeldDatabase(dbFile, address, dir);
  return record;
}

/**
 * A client for CLI commands; an unreachable server is one clear line (see the file comment). A bad
 * storage or encryption setting is bad input (exit 2), told before the server is looked for.
 * The data converter, the Temporal configuration and the dev server records are the `settings`'.
 */
export async function connectOrFail(
  overrides: ConnectOverrides,
  settings: Settings,
): Promise<{ client: Client; address: string; namespace: string; dataConverter: DataConverter }> {
  const target = temporalTarget(settings.temporal.get(), overrides);
  const address = target.connectionOptions.address ?? '';
  const dataConverter = dataConverterOf(settings);
  await failIfNothingListens(address, settings.stateDir);
  try {
    return { client: await openClient(target, dataConverter, settings.taskQueue), address, namespace: target.namespace, dataConverter };
  } catch (err) {
    throw new CliError(`cannot reach Temporal at ${address}: ${(err as Error).message} (start one with \`mcp-turns server\`)`, EXIT.failed);
  }
}
