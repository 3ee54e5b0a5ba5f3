/**
 * `mcp-turns server`: the Temporal dev server in the foreground, recorded for later commands. On a
 * port where a Temporal server already answers it is reused only when it keeps its data in the same
 * database; a server on another database is an error (exit 1), since the work this one's database
 * holds would not be found there.
 */
import path from 'node:path';
import { Command } from 'commander';
import { startDevServer, portIsOpen, temporalAnswers } from '../../temporal/dev-server';
import { devServerStartFailure, refuseHeldDatabase } from '../connect';
import { defaultDevServerDb } from '../../temporal/project-paths';
import { SEARCH_ATTRIBUTES } from '../../core/search-attributes';
import {
  lastDevServerRecord,
  listeningDevServer,
  readDevServerRecord,
  recordedServerRuns,
  removeDevServerRecord,
  writeDevServerRecord,
} from '../../temporal/dev-server-record';
import { processAlive } from '../../temporal/process-alive';
import { CliError, parsePort } from '../cli-error';
import { EXIT } from '../exit-codes';
import { cliSettings } from '../cli-settings';

/**
 * Stops the dev server mcp-turns started at `address` (SIGTERM, then SIGKILL after 15 s) and forgets
 * its record (in `stateDir`); a recorded server that is already down is only forgotten.
 */
async function stopRecordedServer(address: string, stateDir: string): Promise<void> {
  const record = lastDevServerRecord(address, stateDir);
  if (!record) throw new CliError(`no dev server started by mcp-turns runs on ${address} (records in ${stateDir})`, EXIT.notFound);
  if (!recordedServerRuns(record)) {
    removeDevServerRecord(address, stateDir);
    console.log(`The Temporal dev server on ${address} (pid ${record.pid}) was not running; its record is removed and its database ${record.dbFile ?? ''} kept.`);
    return;
  }
  process.kill(record.pid, 'SIGTERM');
  const deadline = Date.now() + 15_000;
  while (processAlive(record.pid)) {
    if (Date.now() > deadline) process.kill(record.pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 100));
  }
  removeDevServerRecord(address, stateDir);
  console.log(`Stopped the Temporal dev server on ${address} (pid ${record.pid}); its database ${record.dbFile ?? ''} is kept.`);
}

/**
 * The Temporal server answering at `address` is reused when it keeps its data in `dbFile`. Which
 * database it uses is read from the process listening on the port (Linux), else from the record of
 * the live server mcp-turns started there (recorded in `stateDir`); when neither tells, it is reused
 * and the line says so.
 */
function reuseAnsweringServer(address: string, port: number, dbFile: string, stateDir: string): void {
  const record = readDevServerRecord(address, stateDir);
  const running = listeningDevServer(port) ?? (record && { pid: record.pid, dbFile: record.dbFile });
  if (!running) {
    console.log(`A Temporal server already answers on ${address}; reusing it (which database it uses cannot be told).`);
    return;
  }
  if (running.dbFile && path.resolve(running.dbFile) === dbFile) {
    console.log(`A Temporal server already answers on ${address}; reusing it.`);
    return;
  }
  const stop = record?.pid === running.pid ? `\`mcp-turns server --stop --port ${port}\`` : `\`kill ${running.pid}\``;
  throw new CliError(
    `the Temporal dev server on ${address} (pid ${running.pid}) uses another database (${running.dbFile ?? 'none: in memory'}), not ${dbFile}: ` +
      `stop it first (${stop}) or choose another --port`,
    EXIT.failed,
  );
}

export function serverCommand(): Command {
  return new Command('server')
    .description('start the Temporal dev server (persistent SQLite, Web UI, mcp-turns search attributes)')
    .option('--port <port>', 'gRPC port', '7233')
    .option('--ui-port <port>', 'Web UI port (default: the gRPC port + 1000)')
    .option('--ip <ip>', 'address to bind', '127.0.0.1')
    .option('--db <file>', 'SQLite file (default: <state dir>/temporal.db)')
    .option('--codec-endpoint <url>', 'the Web UI decodes payloads through this codec server (`mcp-turns codec-server`, e.g. http://127.0.0.1:8888)')
    .option('--verbose', "print the server's own log")
    .option('--stop', 'stop the dev server that `run` or `batch` started in the background on --port')
    .action(async (opts: { port: string; uiPort?: string; ip: string; db?: string; codecEndpoint?: string; verbose?: boolean; stop?: boolean }, command: Command) => {
      const { stateDir } = cliSettings(command);
      const port = parsePort(opts.port, '--port');
      if (opts.codecEndpoint !== undefined && !/^https?:\/\/[^/\s]+(\/\S*)?$/.test(opts.codecEndpoint)) {
        throw new CliError(`--codec-endpoint must be an http(s) URL such as http://127.0.0.1:8888, got "${opts.codecEndpoint}"`, EXIT.badInput);
      }
      const uiPort = opts.uiPort === undefined ? port + 1000 : parsePort(opts.uiPort, '--ui-port');
      const address = `${opts.ip}:${port}`;
      if (opts.stop) {
        await stopRecordedServer(address, stateDir);
        return;
      }
      const dbFile = path.resolve(opts.db ?? defaultDevServerDb(stateDir));
      if (await portIsOpen(opts.ip, port)) {
        if (await temporalAnswers(address)) {
          if (opts.codecEndpoint) console.error(`Note: --codec-endpoint applies to a server this command starts; the one on ${address} keeps its UI as it was started (stop it, then start it with the flag).`);
          return reuseAnsweringServer(address, port, dbFile, stateDir);
        }
        throw new CliError(`port ${port} on ${opts.ip} is in use by something that is not a Temporal server`);
      }
      refuseHeldDatabase(dbFile, address, stateDir, 'pass another --db');
      const previous = lastDevServerRecord(address, stateDir);
      if (previous?.dbFile && path.resolve(previous.dbFile) !== dbFile)
        console.error(`Note: the dev server mcp-turns last started on ${address} used another database, ${previous.dbFile}.`);
      let server;
      try {
        server = await startDevServer({
          port,
          uiPort,
          ip: opts.ip,
          dbFile,
          stateDir,
          ...(opts.codecEndpoint ? { extraArgs: ['--ui-codec-endpoint', opts.codecEndpoint] } : {}),
          onLog: (line) => (opts.verbose || line.startsWith('installing') || line.startsWith('temporal CLI') ? console.error(line) : undefined),
        });
      } catch (err) {
        throw devServerStartFailure(err, address, stateDir);
      }
      writeDevServerRecord({ pid: server.pid!, address: server.address, uiUrl: server.uiUrl, dbFile, startedAt: new Date().toISOString() }, stateDir);
      console.log(`Temporal dev server on ${server.address} (db ${dbFile})`);
      console.log(`Search attributes: ${SEARCH_ATTRIBUTES.map((k) => k.name).join(', ')}`);
      console.log(`Temporal Web UI: ${server.uiUrl}${opts.codecEndpoint ? ` (payloads decoded by ${opts.codecEndpoint})` : ''}`);
      let stopping = false;
      const stop = (signal: string): void => {
        if (stopping) return;
        stopping = true;
        console.log(`${signal}: stopping the Temporal dev server`);
        void server.stop().then(() => {
          removeDevServerRecord(server.address, stateDir);
          process.exit(0);
        });
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
      const code = await server.exited;
      // A server that died keeps its record: later commands name it (and its database) instead of
      // starting another one on its port.
      if (!stopping) throw new CliError(`the Temporal dev server exited unexpectedly (code ${code})`);
    });
}
