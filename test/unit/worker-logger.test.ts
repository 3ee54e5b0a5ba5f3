/** The worker process's logger drops only the warning its activity-only Claude-queue worker makes by design. */
import type { LogEntry } from '@temporalio/worker';
import { NO_WORKFLOWS_WARNING, WorkerLogger } from '../../src/worker/worker-logger';
import { claudeTaskQueue } from '../../src/core/task-queues';
import { EncryptionKeyMissingError } from '../../src/encryption/encryption-codec';

function logged(write: (logger: WorkerLogger) => void): string[] {
  const entries: LogEntry[] = [];
  write(new WorkerLogger('INFO', (e) => entries.push(e)));
  return entries.map((e) => `${e.level} ${e.message} ${String(e.meta?.taskQueue)}`);
}

it('drops "No workflows registered" for a Claude queue only; every other line is logged', () => {
  const claudeQueue = claudeTaskQueue('mcp-turns');
  expect(
    logged((l) => {
      l.warn(NO_WORKFLOWS_WARNING, { taskQueue: claudeQueue });
      l.warn(NO_WORKFLOWS_WARNING, { taskQueue: 'mcp-turns' });
      l.warn(NO_WORKFLOWS_WARNING);
      l.warn('Activity failed', { taskQueue: claudeQueue });
      l.info(NO_WORKFLOWS_WARNING, { taskQueue: claudeQueue });
      l.debug('below the level', { taskQueue: 'mcp-turns' });
    }),
  ).toEqual([
    `WARN ${NO_WORKFLOWS_WARNING} mcp-turns`,
    `WARN ${NO_WORKFLOWS_WARNING} undefined`,
    `WARN Activity failed ${claudeQueue}`,
    `INFO ${NO_WORKFLOWS_WARNING} ${claudeQueue}`,
  ]);
});

it('logs a workflow task failing for a setup reason (a missing key, a missing stored payload) as one line, and any other failure with its stack', () => {
  const entries: LogEntry[] = [];
  const logger = new WorkerLogger('INFO', (e) => entries.push(e));
  const missingKey = new EncryptionKeyMissingError('k1', undefined);
  const bug = new TypeError('x is undefined');
  logger.error('Failed to process Workflow Activation', { taskQueue: 'mcp-turns', error: missingKey });
  logger.error('Failed to process Workflow Activation', { taskQueue: 'mcp-turns', error: bug });
  expect(entries[0]!.meta).toEqual({ taskQueue: 'mcp-turns', error: `EncryptionKeyMissing: ${missingKey.message}` });
  expect(entries[1]!.meta?.error).toBe(bug);
});
