/**
 * What `run`, `batch` and `chat` need before they start work, in one command: a Temporal server
 * (the one configured; on this machine, started in the background when none answers, and left
 * running for the next command, unless the server recorded at that address keeps its data in
 * another database: then the command names that server and how to start it) and a worker (one
 * already polling the task queue, else one in this process for the command's duration). Each step
 * says on stderr what it found or started.
 */
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { liveWorkflowPollers } from '../client/task-queue-pollers';
import { temporalTarget, type ConnectOverrides } from '../temporal/connection';
import type { Settings } from '../config/settings';
import { portIsOpen, startDevServer, temporalAnswers } from '../temporal/dev-server';
import { registerMissingSearchAttributes } from '../temporal/search-attribute-registration';
import {
  isLoopbackAddress,
  readDevServerRecord,
  removeDevServerRecord,
  splitAddress,
  uiPortOf,
  writeDevServerRecord,
  type DevServerRecord,
} from '../temporal/dev-server-record';
import { defaultDevServerDb } from '../temporal/project-paths';
import { CliError } from './cli-error';
import { assertMayStartDevServer, connectOrFail, devServerStartFailure, nothingListensAt } from './connect';
import type * as InProcessWorkerModule from './in-process-worker';
import type { InProcessWorker, InProcessWorkerSetup } from './in-process-worker';

/**
 * The in-process worker's module, loaded only when a command runs its own worker: it brings the
 * Temporal worker, the MCP client and the Claude SDK (~0.6 s), which a command that finds a worker
 * polling has no use for.
 */
function inProcessWorkerModule(): typeof InProcessWorkerModule {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require('./in-process-worker') as typeof InProcessWorkerModule;
}

/** A command's flags that say where its work runs (`--address`, `--namespace`; the task queue is the settings'). */
export interface TurnStackOptions extends ConnectOverrides {
  /** The command's `--config`, when given: a worker already polling does not use it (said so). */
  config?: string;
}

export interface TurnStack {
  /** The settings the command runs with. */
  settings: Settings;
  client: Client;
  address: string;
  namespace: string;
  /** The task queue the command's work goes to. */
  taskQueue: string;
  /** The Web UI of the server in use when mcp-turns started it, else the settings' (links guess from the address otherwise). */
  uiUrl?: string;
  /**
   * True when the worker is this process's own: the work stops with the command, until another
   * worker runs it. Then `client` is on the worker's connection, and turns started with
   * `eagerStart: true` start eagerly (src/client/chat-turn-client.ts).
   */
  inProcessWorker: boolean;
  /** The MCP servers (by name) of this process's own worker; absent when the work goes to a worker elsewhere. */
  workerServers?: string[];
  /** Waits for `work`, failing early if the in-process worker fails meanwhile. */
  whileWorking<T>(work: Promise<T>): Promise<T>;
  /** Stops the in-process worker and closes the connection; a dev server started here keeps running. */
  close(): Promise<void>;
}

/**
 * Starts the dev server in the background at `address` on the state directory's database, records
 * it (in `stateDir`) and says so. `dead`, the record of the server that ran there on that same
 * database, is started again with its Web UI port.
 */
async function startBackgroundDevServer(
  address: string,
  namespace: string,
  dead: DevServerRecord | undefined,
  say: (line: string) => void,
  { stateDir, temporalCliPath }: Pick<Settings, 'stateDir' | 'temporalCliPath'>,
): Promise<{ stop(): Promise<void> }> {
  const { host, port } = splitAddress(address)!;
  const ip = host === 'localhost' || host === '0.0.0.0' ? '127.0.0.1' : host;
  const dbFile = defaultDevServerDb(stateDir);
  const logFile = path.join(stateDir, 'temporal-server.log');
  if (await portIsOpen(ip, port))
    throw new CliError(`port ${port} on ${ip} is in use by something that is not a Temporal server`);
  const uiPort = (dead && uiPortOf(dead)) ?? port + 1000;
  say(
    dead
      ? `The Temporal dev server on ${address} (database ${dbFile}, pid ${dead.pid}) is not running: starting it again in the background…`
      : `No Temporal server answers on ${address}: starting the dev server in the background…`,
  );
  let server;
  try {
    server = await startDevServer({
      ip,
      port,
      uiPort,
      namespace,
      dbFile,
      background: { logFile },
      onLog: say,
      stateDir,
      ...(temporalCliPath ? { configuredCliPath: temporalCliPath } : {}),
    });
  } catch (err) {
    throw devServerStartFailure(err, address, stateDir);
  }
  writeDevServerRecord({
    pid: server.pid!,
    address,
    uiUrl: server.uiUrl,
    dbFile,
    logFile,
    startedAt: new Date().toISOString(),
  }, stateDir);
  say(
    `Temporal dev server on ${address} (Web UI ${server.uiUrl}; database ${dbFile}; log ${logFile}). ` +
      `It keeps running for the next commands; \`mcp-turns server --stop --port ${port}\` stops it.`,
  );
  return {
    async stop() {
      await server.stop();
      removeDevServerRecord(address, stateDir);
    },
  };
}

/**
 * Finds or starts the server and the worker; see the file comment. With `runWorker: false` no
 * worker is started here: the work waits for one. State and the config file are the command's `settings`.
 */
export async function openTurnStack(opts: TurnStackOptions, settings: Settings, { runWorker = true } = {}): Promise<TurnStack> {
  const { taskQueue } = settings;
  const say = (line: string): void => console.error(line);
  const target = temporalTarget(settings.temporal.get(), opts);
  const { connectionOptions, namespace } = target;
  const address = connectionOptions.address ?? '';
  const plain = !connectionOptions.tls && !connectionOptions.apiKey;
  let setup: InProcessWorkerSetup | undefined;
  let startedServer: { stop(): Promise<void> } | undefined;
  const local = plain && isLoopbackAddress(address);
  // Nothing listening is known at once; only a listener is worth a gRPC health check.
  if (local && ((await nothingListensAt(address)) || !(await temporalAnswers(address)))) {
    // Refused before anything else is looked at when the server recorded here keeps another database.
    const dead = assertMayStartDevServer(address, defaultDevServerDb(settings.stateDir), settings.stateDir);
    // A fresh server has no worker: check the worker's config before starting anything.
    if (runWorker) setup = inProcessWorkerModule().inProcessWorkerSetup(settings);
    startedServer = await startBackgroundDevServer(address, namespace, dead, say, settings);
  }
  let client: Client | undefined;
  let worker: InProcessWorker | undefined;
  try {
    let dataConverter;
    ({ client, dataConverter } = await connectOrFail({ address: opts.address, namespace: opts.namespace }, settings));
    // A dev server mcp-turns started with an earlier version lacks the attributes added since.
    // Another server (the person's own) is left as it is: a start that needs one names the fix.
    if (local && !startedServer && readDevServerRecord(address, settings.stateDir)) {
      const added = await registerMissingSearchAttributes(client.connection, namespace).catch(() => []);
      if (added.length) say(`Registered search attributes ${added.join(', ')} on ${address} (its database predates them).`);
    }
    const pollers = await liveWorkflowPollers(client, taskQueue);
    if (pollers.length) {
      if (opts.config) {
        say(
          `A worker already polls task queue ${taskQueue} (${pollers.map((p) => p.identity).join(', ')}): ` +
            'it runs the work with its own config; --config is not used.',
        );
      }
    } else if (runWorker) {
      setup ??= inProcessWorkerModule().inProcessWorkerSetup(settings);
      const servers = setup.config.servers.map((s) => s.name);
      say(
        `No worker polls task queue ${taskQueue}: running one in this process until the command ends ` +
          `(config ${setup.config.source}; MCP servers: ${servers.join(', ') || 'none'}).`,
      );
      worker = await inProcessWorkerModule().startInProcessWorker(setup, target, taskQueue, settings, dataConverter);
    } else {
      say(`No worker polls task queue ${taskQueue}: the work waits until one does (\`mcp-turns worker\`).`);
    }
  } catch (err) {
    await client?.connection.close();
    // Nothing was started on it yet: a server started for this command goes with the command's failure.
    await startedServer?.stop();
    throw err;
  }
  const record = readDevServerRecord(address, settings.stateDir);
  const inProcess = worker;
  const connected = client;
  return {
    settings,
    client: inProcess?.client ?? connected,
    address,
    namespace,
    taskQueue,
    ...((record?.uiUrl ?? settings.uiUrl) ? { uiUrl: record?.uiUrl ?? settings.uiUrl } : {}),
    inProcessWorker: inProcess !== undefined,
    ...(inProcess && setup ? { workerServers: setup.config.servers.map((s) => s.name) } : {}),
    whileWorking: (work) => (inProcess ? Promise.race([work, inProcess.failed]) : work),
    async close() {
      await inProcess?.stop();
      await connected.connection.close();
    },
  };
}
