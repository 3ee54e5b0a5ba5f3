import { Command } from 'commander';
import { temporalTarget } from '../../temporal/connection';
import { TemporalConnectError } from '../../temporal/worker-connection';
import { startWorkers } from '../../worker/turn-worker';
import { dataConverterOf } from '../../data-converter/data-converter';
import { CliError } from '../cli-error';
import { failIfNothingListens } from '../connect';
import { cliSettings } from '../cli-settings';

const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR'] as const;

export function workerCommand(): Command {
  return new Command('worker')
    .description('run an mcp-turns worker (turn workflows, MCP calls, Claude calls)')
    .option('--config <file>', 'config file (JSON or YAML; default MCP_TURNS_CONFIG)')
    .option('--task-queue <queue>', 'task queue (default mcp-turns or MCP_TURNS_TASK_QUEUE)')
    .option('--address <host:port>', 'Temporal address (default from TEMPORAL_ADDRESS / profile)')
    .option('--namespace <ns>', 'Temporal namespace')
    .option('--metrics <host:port>', 'serve Prometheus metrics here (default MCP_TURNS_METRICS)')
    .option('--log-level <level>', 'TRACE, DEBUG, INFO, WARN or ERROR', 'INFO')
    .action(async (opts: { address?: string; namespace?: string; logLevel: string }, command: Command) => {
      const settings = cliSettings(command);
      // Every setting the worker runs with is checked before it connects: one line naming what is wrong.
      settings.worker.get();
      settings.claudeApi.get();
      const level = LOG_LEVELS.find((l) => l === opts.logLevel.toUpperCase());
      if (!level) throw new CliError(`--log-level must be TRACE, DEBUG, INFO, WARN or ERROR, got "${opts.logLevel}"`, 2);
      settings.tracing.get();
      const dataConverter = dataConverterOf(settings);
      const target = temporalTarget(settings.temporal.get(), { address: opts.address, namespace: opts.namespace });
      const address = target.connectionOptions.address ?? '';
      await failIfNothingListens(address, settings.stateDir);
      let worker;
      try {
        worker = await startWorkers({ settings, target, dataConverter, logLevel: level });
      } catch (err) {
        if (err instanceof TemporalConnectError) throw new CliError(`${err.message} (start one with \`mcp-turns server\`)`);
        throw err;
      }
      const stop = (signal: string): void => {
        console.error(`${signal}: shutting the worker down (in-flight activities finish or are retried elsewhere)`);
        worker.shutdown();
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
      console.log(`mcp-turns worker on ${address} namespace ${worker.namespace}, ${worker.description}`);
      try {
        await worker.run();
      } finally {
        await worker.close();
      }
      console.log('worker stopped');
    });
}
