import path from 'node:path';
import { Command } from 'commander';
import { startDevServer, portIsOpen, temporalAnswers, DevServerError } from '../../temporal/dev-server';
import { stateDir } from '../../temporal/project-paths';
import { SEARCH_ATTRIBUTES } from '../../core/search-attributes';
import { CliError, parsePort } from '../cli-error';

export function serverCommand(): Command {
  return new Command('server')
    .description('start the Temporal dev server (persistent SQLite, Web UI, mcp-turns search attributes)')
    .option('--port <port>', 'gRPC port', '7233')
    .option('--ui-port <port>', 'Web UI port', '8233')
    .option('--ip <ip>', 'address to bind', '127.0.0.1')
    .option('--db <file>', 'SQLite file (default: .mcp-turns/temporal.db)')
    .option('--verbose', "print the server's own log")
    .action(async (opts: { port: string; uiPort: string; ip: string; db?: string; verbose?: boolean }) => {
      const port = parsePort(opts.port, '--port');
      const uiPort = parsePort(opts.uiPort, '--ui-port');
      const address = `${opts.ip}:${port}`;
      if (await portIsOpen(opts.ip, port)) {
        if (await temporalAnswers(address)) {
          console.log(`A Temporal server already answers on ${address}; reusing it.`);
          return;
        }
        throw new CliError(`port ${port} on ${opts.ip} is in use by something that is not a Temporal server`);
      }
      const dbFile = path.resolve(opts.db ?? path.join(stateDir(), 'temporal.db'));
      let server;
      try {
        server = await startDevServer({
          port,
          uiPort,
          ip: opts.ip,
          dbFile,
          onLog: (line) => (opts.verbose || line.startsWith('installing') || line.startsWith('temporal CLI') ? console.error(line) : undefined),
        });
      } catch (err) {
        if (err instanceof DevServerError) throw new CliError(err.message);
        throw err;
      }
      console.log(`Temporal dev server on ${server.address} (db ${dbFile})`);
      console.log(`Search attributes: ${SEARCH_ATTRIBUTES.map((k) => k.name).join(', ')}`);
      console.log(`Temporal Web UI: ${server.uiUrl}`);
      let stopping = false;
      const stop = (signal: string): void => {
        if (stopping) return;
        stopping = true;
        console.log(`${signal}: stopping the Temporal dev server`);
        void server.stop().then(() => process.exit(0));
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
      const code = await server.exited;
      if (!stopping) throw new CliError(`the Temporal dev server exited unexpectedly (code ${code})`);
    });
}
