import path from 'node:path';
import { Command } from 'commander';
import { loadScenarioFile, startStubModel, ScenarioError } from '../../stub';
import { asBadInput, parsePort } from '../cli-error';

export function stubModelCommand(): Command {
  return new Command('stub-model')
    .description('serve a scripted, Anthropic-compatible Claude from a scenario file (offline work and tests)')
    .requiredOption('--scenario <file>', 'scenario file (JSON or YAML)')
    .option('--port <port>', 'port (default: a free one)')
    .option('--host <host>', 'address to bind', '127.0.0.1')
    .action(async (opts: { scenario: string; port?: string; host: string }) => {
      const name = path.basename(opts.scenario).replace(/\.[^.]*$/, '');
      const scenario = asBadInput(() => loadScenarioFile(opts.scenario), ScenarioError);
      const stub = await startStubModel({
        scenarios: { [name]: scenario },
        defaultScenario: name,
        host: opts.host,
        ...(opts.port ? { port: parsePort(opts.port, '--port') } : {}),
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
