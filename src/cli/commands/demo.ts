/**
 * `mcp-turns demo`: everything on one machine in one command: the dev server (started or reused),
 * a worker, server-everything over stdio, and, without ANTHROPIC_API_KEY, the scripted Claude with
 * the bundled demo scenario. Runs one turn and prints the answer, the tool calls and the UI link.
 */
import path from 'node:path';
import { Command } from 'commander';
import { NativeConnection } from '@temporalio/worker';
import { Client, Connection } from '@temporalio/client';
import { startDevServer, portIsOpen, temporalAnswers, type DevServer } from '../../temporal/dev-server';
import { stateDir } from '../../temporal/project-paths';
import { startStubModel, demoScenario, type StubModel } from '../../stub';
import { McpPool } from '../../mcp';
import { parseConfig } from '../../worker/worker-file';
import { createClaudeClient } from '../../claude/client';
import { resolveClaudeConfig } from '../../claude/config';
import { createTurnWorkers } from '../../worker/turn-worker';
import { executeChatTurn } from '../../client/chat-turn-client';
import { workflowUrl } from '../../client/ui-link';
import { DEFAULT_MODEL } from '../../core/turn-defaults';
import { CliError, parsePort } from '../cli-error';
import { renderResult } from '../render';
import { installTelemetry } from '../../worker/telemetry';

const DEMO_QUESTION = 'Use the tools: echo "hello from mcp-turns", add 2 and 3, then echo what you found.';

interface DemoOptions {
  port: string;
  uiPort: string;
  model?: string;
  question: string;
  keep?: boolean;
}

export function demoCommand(): Command {
  return new Command('demo')
    .description('run one durable chat turn end to end (offline with the scripted Claude unless ANTHROPIC_API_KEY is set)')
    .option('--port <port>', 'Temporal gRPC port (started or reused)', '7233')
    .option('--ui-port <port>', 'Temporal Web UI port', '8233')
    .option('--model <model>', `Claude model when ANTHROPIC_API_KEY is set (default ${DEFAULT_MODEL})`)
    .option('--question <text>', 'the question', DEMO_QUESTION)
    .option('--keep', 'keep the dev server running after the turn (default on a terminal)')
    .action(async (opts: DemoOptions) => {
      const port = parsePort(opts.port, '--port');
      const uiPort = parsePort(opts.uiPort, '--ui-port');
      const address = `127.0.0.1:${port}`;
      const say = (line: string): void => console.log(line);
      installTelemetry({ logLevel: 'ERROR' });

      let server: DevServer | undefined;
      if (await temporalAnswers(address)) say(`Reusing the Temporal server on ${address}.`);
      else if (await portIsOpen('127.0.0.1', port)) throw new CliError(`port ${port} is in use by something that is not a Temporal server`);
      else {
        say('Starting the Temporal dev server…');
        server = await startDevServer({
          port,
          uiPort,
          dbFile: path.join(stateDir(), 'temporal.db'),
          onLog: (line) => (line.startsWith('installing') || line.startsWith('temporal CLI') ? say(line) : undefined),
        });
        say(`Temporal dev server on ${server.address}, Web UI ${server.uiUrl}`);
      }

      let stub: StubModel | undefined;
      let model: string;
      const realClaude = !!process.env.ANTHROPIC_API_KEY;
      if (realClaude) {
        model = opts.model ?? DEFAULT_MODEL;
        say(`Claude: ${model} via ${process.env.ANTHROPIC_BASE_URL ?? 'the Anthropic API'}`);
      } else {
        stub = await startStubModel({ scenarios: { demo: demoScenario }, defaultScenario: 'demo' });
        model = 'demo';
        say(`Claude: no ANTHROPIC_API_KEY, so the scripted stub at ${stub.url} plays it (scenario "demo").`);
      }
      const claudeClient = stub ? createClaudeClient({ baseURL: stub.url, apiKey: 'offline-demo' }) : createClaudeClient();

      const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
      const mcp = parseConfig(
        JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } }),
        'json',
        process.env,
        'demo',
      );
      const pool = new McpPool(mcp.servers);
      const connection = await NativeConnection.connect({ address });
      const taskQueue = `mcp-turns-demo-${process.pid}`;
      const workers = await createTurnWorkers({
        connection,
        taskQueue,
        pool,
        claudeClient,
        claudeConfig: resolveClaudeConfig({}),
      });
      const running = workers.run();
      const clientConnection = await Connection.connect({ address });
      const client = new Client({ connection: clientConnection });
      const workflowId = `demo-${Date.now().toString(36)}`;
      try {
        say(`Running one turn (workflow ${workflowId})…\n`);
        const result = await executeChatTurn(client, { question: opts.question, model, servers: ['everything'] }, { taskQueue, workflowId });
        say(renderResult(result, workflowUrl(address, 'default', workflowId, server?.uiUrl ?? `http://127.0.0.1:${uiPort}`)));
      } finally {
        workers.shutdown();
        await running;
        await pool.close();
        await stub?.close();
        await clientConnection.close();
        await connection.close();
      }
      if (server) {
        if (opts.keep ?? process.stdout.isTTY) {
          say(`\nThe dev server keeps running so you can open the UI (${server.uiUrl}); Ctrl-C stops it.`);
          await new Promise<void>((resolve) => {
            process.once('SIGINT', () => resolve());
            process.once('SIGTERM', () => resolve());
          });
        }
        await server.stop();
      }
    });
}
