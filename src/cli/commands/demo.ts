/**
 * `mcp-turns demo`: everything on one machine in one command: the dev server (started or reused),
 * a worker, server-everything over stdio, and, without ANTHROPIC_API_KEY, the scripted Claude with
 * the bundled demo scenario. Runs one turn and prints the answer, the tool calls and the UI link.
 * A dev server the demo started and does not keep (output not a terminal, or `--keep` not given
 * there) is stopped at the end: then no link is printed as if it worked, but the command that brings
 * the server back with the run's history, and the link to open once it runs.
 */
import { Command } from 'commander';
import { Client } from '@temporalio/client';
import { startDevServer, portIsOpen, temporalAnswers, type DevServer } from '../../temporal/dev-server';
import { readDevServerRecord, removeDevServerRecord, writeDevServerRecord } from '../../temporal/dev-server-record';
import { defaultDevServerDb } from '../../temporal/project-paths';
import { startStubModel, demoScenario } from '../../stub';
import { startWorkers } from '../../worker/turn-worker';
import { workerConfigOf } from '../../config/worker-config';
import type { Settings } from '../../config/settings';
import { temporalTarget } from '../../temporal/connection';
import { clientStorageOptions } from '../../data-converter/client-storage-options';
import { dataConverterOf } from '../../data-converter/data-converter';
import { startChatTurn } from '../../client/chat-turn-client';
import { workflowUrl } from '../../client/ui-link';
import { DEFAULT_MODEL } from '../../core/resolve-turn';
import { CliError, parsePort } from '../cli-error';
import { cliSettings } from '../cli-settings';
import { assertMayStartDevServer, devServerStartFailure, restartCommand } from '../connect';
import { renderResult } from '../render';
import { StreamPrinter } from '../stream-printer';
import { subscribeTurn } from '../../client/subscribe';
import { withSearchAttributeFix } from '../search-attribute-fix';

const DEMO_QUESTION = 'Use the tools: echo "hello from mcp-turns", add 2 and 3, then echo what you found.';

interface DemoOptions {
  port: string;
  uiPort?: string;
  model?: string;
  question: string;
  keep?: boolean;
}

/** Cleanups of what a command started, run last-first whether it succeeded or not. */
class Started {
  private readonly cleanups: (() => Promise<unknown>)[] = [];
  add(cleanup: () => Promise<unknown>): void {
    this.cleanups.push(cleanup);
  }
  async stopAll(): Promise<void> {
    for (const cleanup of this.cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

export function demoCommand(): Command {
  return new Command('demo')
    .description('run one durable chat turn end to end (offline with the scripted Claude unless ANTHROPIC_API_KEY is set)')
    .option('--port <port>', 'Temporal gRPC port (started or reused)', '7233')
    .option('--ui-port <port>', 'Temporal Web UI port (default: the gRPC port + 1000)')
    .option('--model <model>', `Claude model when ANTHROPIC_API_KEY is set (default ${DEFAULT_MODEL})`)
    .option('--question <text>', 'the question', DEMO_QUESTION)
    .option('--keep', 'keep the dev server running after the turn (default on a terminal)')
    .action(async (opts: DemoOptions, command: Command) => {
      const settings = cliSettings(command);
      const port = parsePort(opts.port, '--port');
      const uiPort = opts.uiPort === undefined ? undefined : parsePort(opts.uiPort, '--ui-port');
      const address = `127.0.0.1:${port}`;
      const say = (line: string): void => console.log(line);
      // Resolved first: a missing MCP server must fail before anything is started.
      const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');

      const dbFile = defaultDevServerDb(settings.stateDir);
      let server: DevServer | undefined;
      let uiUrl: string | undefined;
      if (await temporalAnswers(address)) {
        say(`Reusing the Temporal server on ${address}.`);
        uiUrl = uiPort === undefined ? readDevServerRecord(address, settings.stateDir)?.uiUrl : `http://127.0.0.1:${uiPort}`;
      } else if (await portIsOpen('127.0.0.1', port)) throw new CliError(`port ${port} is in use by something that is not a Temporal server`);
      else {
        assertMayStartDevServer(address, dbFile, settings.stateDir);
        say('Starting the Temporal dev server…');
        try {
          server = await startDevServer({
            port,
            ...(uiPort !== undefined ? { uiPort } : {}),
            dbFile,
            stateDir: settings.stateDir,
            ...(settings.temporalCliPath ? { configuredCliPath: settings.temporalCliPath } : {}),
            onLog: (line) => (line.startsWith('installing') || line.startsWith('temporal CLI') ? say(line) : undefined),
          });
        } catch (err) {
          throw devServerStartFailure(err, address, settings.stateDir);
        }
        uiUrl = server.uiUrl;
        writeDevServerRecord({ pid: server.pid!, address, uiUrl, dbFile, startedAt: new Date().toISOString() }, settings.stateDir);
        say(`Temporal dev server on ${server.address}, Web UI ${server.uiUrl}`);
      }
      const started = new Started();
      if (server) {
        const dev = server;
        started.add(async () => {
          await dev.stop();
          removeDevServerRecord(address, settings.stateDir);
        });
      }
      const keep = !server || (opts.keep ?? process.stdout.isTTY === true);
      let workflowId: string;
      try {
        workflowId = await runDemoTurn({ address, uiUrl, link: keep, model: opts.model, question: opts.question, everything, say, started, settings });
        if (server && keep) {
          say(`\nThe dev server keeps running so you can open the UI (${server.uiUrl}); Ctrl-C stops it.`);
          await new Promise<void>((resolve) => {
            process.once('SIGINT', () => resolve());
            process.once('SIGTERM', () => resolve());
          });
        }
      } finally {
        await started.stopAll();
      }
      if (server && !keep) {
        const again = restartCommand({ address, uiUrl: server.uiUrl, dbFile });
        say(
          `\nThe dev server this demo started is stopped now (--keep keeps it running). Its database keeps the run: ` +
            `\`${again}\` brings it back, then Temporal UI: ${workflowUrl(address, 'default', workflowId, server.uiUrl)}`,
        );
      }
    });
}

/** The demo's turn: Claude (real or the stub), server-everything and a worker in this process, each added to `started`; its workflow id. */
async function runDemoTurn(opts: {
  address: string;
  uiUrl: string | undefined;
  /** Print the turn's Web UI link (its server goes on running). */
  link: boolean;
  model: string | undefined;
  question: string;
  everything: string;
  say: (line: string) => void;
  started: Started;
  /** The command's settings: the payload store and encryption of its client and worker. */
  settings: Settings;
}): Promise<string> {
  const { address, say, started, settings } = opts;
  let claudeApi;
  let model: string;
  const api = settingOrNothing(() => settings.claudeApi.get());
  if (api?.apiKey) {
    model = opts.model ?? DEFAULT_MODEL;
    say(`Claude: ${model} via ${api.baseURL ?? 'the Anthropic API'}`);
    claudeApi = api;
  } else {
    const stub = await startStubModel({ scenarios: { demo: demoScenario }, defaultScenario: 'demo' });
    started.add(() => stub.close());
    model = 'demo';
    say(`Claude: no ANTHROPIC_API_KEY, so the scripted stub at ${stub.url} plays it (scenario "demo").`);
    claudeApi = { baseURL: stub.url, apiKey: 'offline-demo' };
  }
  // The demo's own MCP server and Claude defaults; storage and encryption are the settings'.
  const config = workerConfigOf(
    { text: JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [opts.everything, 'stdio'] } } }), format: 'json', source: 'demo' },
    {},
    settings.stateDir,
  );
  const taskQueue = `mcp-turns-demo-${process.pid}`;
  const dataConverter = dataConverterOf(settings);
  const worker = await startWorkers({ settings, target: temporalTarget({ connectionOptions: { address } }), taskQueue, dataConverter, config, claudeApi, logLevel: 'ERROR' });
  const running = worker.run();
  started.add(async () => {
    worker.shutdown();
    await running;
    await worker.close();
  });
  const { connection } = worker;
  // On the worker's connection: the turn starts eagerly (its first workflow task comes with the start).
  const client = new Client({ connection, ...clientStorageOptions(dataConverter) });
  const workflowId = `demo-${Date.now().toString(36)}`;
  say(`Running one turn (workflow ${workflowId})…\n`);
  let handle;
  try {
    handle = await startChatTurn(client, { question: opts.question, model, servers: ['everything'], stream: true }, { taskQueue, workflowId, eagerStart: true });
  } catch (err) {
    throw await withSearchAttributeFix(err, 'the turn', client, address);
  }
  // The turn streams: its text is printed as Claude writes it, a line per tool call.
  const printer = new StreamPrinter({ write: (text) => void process.stdout.write(text), dimSteps: process.stdout.isTTY === true && settings.color });
  for await (const event of subscribeTurn(client, workflowId)) printer.print(event);
  printer.endLine();
  const result = await Promise.race([handle.result(), running.then(() => Promise.reject(new Error('the worker stopped')))]);
  const link = opts.link ? workflowUrl(address, 'default', workflowId, opts.uiUrl ?? settings.uiUrl) : undefined;
  say(`\n${renderResult(result, link, { answer: !printer.answerShown(workflowId) })}`);
  return workflowId;
}

/** `read()`'s value, undefined when the setting cannot be used. */
function settingOrNothing<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
