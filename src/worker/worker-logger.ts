/**
 * The logger of an mcp-turns worker process: Temporal's DefaultLogger, less the one warning its
 * design makes on every start. The process runs a worker on the Claude queue with activities only
 * (src/worker/turn-worker.ts), and Temporal's Worker warns `No workflows registered` for any worker
 * without workflows; on the Claude queue that is how it is meant to be, so that line is dropped
 * there. The same warning for any other queue, and every other line, is logged as it was.
 *
 * A workflow task that fails for a reason a person fixes in the setup (a payload encrypted under a
 * key this worker lacks, a stored payload it cannot find) is logged as one line with that reason,
 * not with a stack: Temporal retries the task every few seconds, and the reason, not the code path,
 * is what the log reader needs. Every other failure keeps its stack.
 */
import { DefaultLogger, type LogLevel, type LogMetadata } from '@temporalio/worker';
import { claudeTaskQueue } from '../core/task-queues';

/** What Temporal's Worker logs when it runs without workflows. */
export const NO_WORKFLOWS_WARNING = 'No workflows registered, not polling for workflow tasks';

/** The suffix every Claude queue has (`claudeTaskQueue`). */
const CLAUDE_QUEUE_SUFFIX = claudeTaskQueue('');

/** True for the warning an activity-only Claude-queue worker makes by design. */
export function isExpectedWarning(level: LogLevel, message: string, meta: LogMetadata | undefined): boolean {
  const taskQueue = meta?.taskQueue;
  return level === 'WARN' && message === NO_WORKFLOWS_WARNING && typeof taskQueue === 'string' && taskQueue.endsWith(CLAUDE_QUEUE_SUFFIX);
}

/** Errors whose message says all a person needs (setup, not code): logged without their stack. */
const SETUP_ERRORS = new Set(['EncryptionKeyMissing', 'StoredPayloadError']);

/** `meta` with a setup error (see the file comment) as its one line; undefined for any other. */
export function withSetupErrorInOneLine(meta: LogMetadata | undefined): LogMetadata | undefined {
  const error = meta?.error;
  if (!(error instanceof Error) || !SETUP_ERRORS.has(error.name)) return undefined;
  return { ...meta, error: `${error.name}: ${error.message}` };
}

export class WorkerLogger extends DefaultLogger {
  override log(level: LogLevel, message: string, meta?: LogMetadata): void {
    if (isExpectedWarning(level, message, meta)) return;
    super.log(level, message, withSetupErrorInOneLine(meta) ?? meta);
  }
}
