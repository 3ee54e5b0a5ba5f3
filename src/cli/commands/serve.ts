/**
 * `mcp-turns serve`: the HTTP front door (src/serve/): the /v1 API, `/api/chat` for `useChat`, the
 * chat page at `/`, the OpenAPI document at `/openapi.json`.
 *
 * One command on a laptop: with no Temporal address configured and a loopback bind, it finds or
 * starts the dev server and a worker, as `run` does. With an address configured it starts nothing
 * and keeps no state: any number of `serve` processes on one cluster answer any request.
 */
import { Command } from 'commander';
import { uiBaseUrl } from '../../client/ui-link';
import { buildServeApp } from '../../serve/serve-app';
import { authSummary, isLoopbackHost } from '../../config/serve-settings';
import { addressConfigured } from '../../temporal/connection';
import { packageVersion } from '../../temporal/project-paths';
import { CliError } from '../cli-error';
import { connectOrFail } from '../connect';
import { EXIT } from '../exit-codes';
import { openTurnStack } from '../turn-stack';
import { cliSettings } from '../cli-settings';

interface ServeOptions {
  port?: string;
  host?: string;
  config?: string;
  address?: string;
  namespace?: string;
  taskQueue?: string;
}

const say = (line: string): void => void process.stderr.write(`${line}\n`);

function parsePort(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new CliError(`--port must be a port number (0-65535), got "${value}"`, EXIT.badInput);
  return n;
}

export function serveCommand(): Command {
  return new Command('serve')
    .description('serve turns over HTTP: the /v1 API, /api/chat for useChat, and a chat page at /')
    .option('--port <port>', 'port to listen on (default 8787; serve.port)')
    .option('--host <host>', 'address to bind (default 127.0.0.1; anything but loopback needs serve.tokens or serve.auth.jwt)')
    .option('--config <file>', 'config file: its serve section, and the MCP servers of a worker started here (default MCP_TURNS_CONFIG)')
    .option('--address <host:port>', 'Temporal address (default from TEMPORAL_ADDRESS / profile); when set, serve starts nothing')
    .option('--namespace <ns>', 'Temporal namespace')
    .option('--task-queue <name>', 'task queue of the turns (default MCP_TURNS_TASK_QUEUE or mcp-turns)')
    .addHelpText(
      'after',
      '\nAuth: serve.tokens in the config ([{ name, token, role? }], token "${VAR}" from the environment),\n' +
        'MCP_TURNS_SERVE_TOKENS=name:token,name:token:admin,…, or OpenID JWTs (serve.auth.jwt: { issuer,\n' +
        'audience }); clients send Authorization: Bearer <token or JWT>. Each caller sees only what they\n' +
        'started; an admin sees everything. Browsers may call only from serve.allowedOrigins.',
    )
    .action(async (opts: ServeOptions, command: Command) => {
      const portFlag = parsePort(opts.port);
      const cli = cliSettings(command, { serve: { ...(opts.host ? { host: opts.host } : {}), ...(portFlag !== undefined ? { port: portFlag } : {}) } });
      const settings = cli.serve.get();
      const configured = addressConfigured(cli.temporal.get(), { address: opts.address });
      const runsItsOwnStack = !configured && isLoopbackHost(settings.host);
      let close: () => Promise<void>;
      let ctx;
      if (runsItsOwnStack) {
        const stack = await openTurnStack({ namespace: opts.namespace, ...(opts.config ? { config: opts.config } : {}) }, cli);
        close = () => stack.close();
        ctx = {
          client: stack.client,
          address: stack.address,
          namespace: stack.namespace,
          taskQueue: stack.taskQueue,
          uiUrl: stack.uiUrl ?? uiBaseUrl(stack.address, cli.uiUrl),
          inProcessWorker: stack.inProcessWorker,
          ...(stack.workerServers ? { servers: stack.workerServers } : {}),
        };
      } else {
        const { client, address, namespace } = await connectOrFail({ address: opts.address, namespace: opts.namespace }, cli);
        close = () => client.connection.close();
        ctx = { client, address, namespace, taskQueue: cli.taskQueue, uiUrl: uiBaseUrl(address, cli.uiUrl) };
      }
      const app = await buildServeApp({ ...ctx, settings, version: packageVersion(), log: say });
      try {
        await app.listen({ host: settings.host, port: settings.port });
      } catch (err) {
        await close();
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EADDRINUSE') throw new CliError(`port ${settings.port} on ${settings.host} is in use: choose another with --port`, EXIT.failed);
        throw err;
      }
      const { port } = app.server.address() as { port: number };
      const host = settings.host.includes(':') ? `[${settings.host}]` : settings.host;
      say(
        `mcp-turns serve on http://${host}:${port} (chat page /, API /v1, useChat /api/chat, OpenAPI /openapi.json; ` +
          `Temporal ${ctx.address}, namespace ${ctx.namespace}, task queue ${ctx.taskQueue}; ` +
          `auth: ${authSummary(settings)})`,
      );
      await new Promise<void>((resolve) => {
        const stop = (): void => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      say('serve: stopping');
      await app.close();
      await close();
    });
}
