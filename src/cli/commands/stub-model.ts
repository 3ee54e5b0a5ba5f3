import path from 'node:path';
import { Command } from 'commander';
import { loadScenarioFile, startStubModel, ScenarioError } from '../../stub';
import { asBadInput, CliError, parsePort } from '../cli-error';

/** The scenario format in brief, after the options; docs/stub-scenarios.md has every field. */
export const SCENARIO_HELP = `
Scenario file (JSON, or YAML for .yaml/.yml), named after the file; it answers every model:
  steps          the answers, in order: step N answers a request with N assistant messages;
                 each {content, stopReason?, usage?, minMaxTokens?, latencyMs?, streamDelayMs?},
                 content: [{type: "text", text} | {type: "tool_use", name, input, id?}
                           | {type: "thinking", thinking} | {type: "redacted_thinking"}]
  formatter      the response_formatter input, e.g. {conversation: [{type: "text", content}]},
                 or an array (one per attempt); default: the last text of the turn
  formatterRefusesForcedTool, formatterAutoText   how the formatter call is refused or answered
  output         the answer to an output request (output_config.format, or OUTPUT_ASK): an object
                 (written as JSON) or a string, or an array of them (one per attempt)
  latencyMs      ms before each answer;  streamDelayMs, formatterStreamDelayMs: ms between deltas
  contextWindowTokens   a larger request gets 400 "prompt is too long"
  perTurn        play the steps once per turn of a conversation (from its current question)
  faults         [{step, status, times?, retryAfter?, retryAfterMs?, shouldRetry?, message?, kind?,
                   batchResult?}]
Templates in the strings of text, thinking, tool_use input, formatter and output: {{question}},
{{toolResults}} (every tool result of the turn), {{lastToolResult}} (its last tool round's).

Example (hello.json):
  {"steps": [{"content": [{"type": "tool_use", "name": "everything__echo",
                           "input": {"message": "{{question}}"}}]},
             {"content": [{"type": "text", "text": "The echo tool said: {{toolResults}}"}]}]}
  mcp-turns stub-model --scenario hello.json --port 4010
  ANTHROPIC_BASE_URL=http://127.0.0.1:4010 mcp-turns run "hello" --config mcp.json
with mcp.json: {"mcpServers": {"everything": {"command": "npx",
                 "args": ["-y", "@modelcontextprotocol/server-everything", "stdio"]}}}

Every field, with a complete example: docs/stub-scenarios.md
(installed: node_modules/mcp-turns/docs/stub-scenarios.md).`;

export function stubModelCommand(): Command {
  return new Command('stub-model')
    .description('serve a scripted, Anthropic-compatible Claude from a scenario file (offline work and tests)')
    .requiredOption('--scenario <file>', 'scenario file (JSON or YAML)')
    .option('--port <port>', 'port (default: a free one)')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .option('--batch-processing-ms <ms>', 'a Message Batch ends this long after it is created', '1000')
    .option('--batch-create-delay-ms <ms>', 'the wait before answering a Message Batch create (the batch exists already)', '0')
    .option('--api-key <key>', 'refuse requests without this key, as the API refuses a bad key (401); default: any key')
    .addHelpText('after', SCENARIO_HELP)
    .action(async (opts: StubModelFlags) => {
      const name = path.basename(opts.scenario).replace(/\.[^.]*$/, '');
      const scenario = asBadInput(() => loadScenarioFile(opts.scenario), ScenarioError);
      const stub = await startStubModel({
        scenarios: { [name]: scenario },
        defaultScenario: name,
        host: opts.host,
        ...(opts.apiKey ? { apiKey: opts.apiKey } : {}),
        ...(opts.port ? { port: parsePort(opts.port, '--port') } : {}),
        messageBatches: {
          processingMs: parseMs(opts.batchProcessingMs, '--batch-processing-ms'),
          createDelayMs: parseMs(opts.batchCreateDelayMs, '--batch-create-delay-ms'),
        },
      });
      console.log(`stub model listening on ${stub.url} (scenario ${name})`);
      console.log(`use it with: ANTHROPIC_BASE_URL=${stub.url}`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      await stub.close();
    });
}

interface StubModelFlags {
  scenario: string;
  port?: string;
  host: string;
  batchProcessingMs: string;
  batchCreateDelayMs: string;
  apiKey?: string;
}

function parseMs(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new CliError(`${flag} must be a whole number of milliseconds (0 or more), got "${value}"`, 2);
  return n;
}
