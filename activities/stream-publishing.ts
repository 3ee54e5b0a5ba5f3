/**
 * How a streamed Claude activity publishes its stream record: as its heartbeat details while it
 * runs (a later attempt reads them and continues the record), in its result when it answers (the
 * activity sets it), and in its failure's details when it ends without an answer: a cancellation's
 * details, an ApplicationFailure's `{ stream }` detail. So every record a subscriber may have seen
 * live is also in the turn's history once the call has ended.
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { StreamRecorder } from '../src/claude/stream-recorder';
import { isStreamRecord, type StreamRecord, type StreamRequest } from '../src/core/stream-record';

/** The failure detail that carries a stream record. */
export interface StreamDetail {
  stream: StreamRecord;
}

/** A recorder for the current activity, continuing the record an earlier attempt published. */
export function streamRecorder(call: 'step' | 'formatter' | 'output', request: StreamRequest): StreamRecorder {
  const ctx = Context.current();
  const previous = ctx.info.heartbeatDetails;
  const recorder = new StreamRecorder({
    attempt: ctx.info.attempt,
    previous: isStreamRecord(previous) ? previous : undefined,
    call,
    request,
    publish: (record) => ctx.heartbeat(record),
  });
  if (recorder.record.parts.length) ctx.heartbeat(recorder.record); // a continued record's retry part is seen at once
  return recorder;
}

/** Runs `fn`; when it throws, the recorder's record goes with the failure. */
export async function keepingRecord<T>(
  recorder: StreamRecorder | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!recorder) throw err;
    const stream = recorder.close();
    if (err instanceof CancelledFailure)
      throw new CancelledFailure(err.message, [stream satisfies StreamRecord], err.cause);
    if (err instanceof ApplicationFailure) {
      throw ApplicationFailure.create({
        type: err.type ?? undefined,
        message: err.message,
        nonRetryable: err.nonRetryable ?? undefined,
        details: [...(err.details ?? []), { stream } satisfies StreamDetail],
        ...(err.cause ? { cause: err.cause } : {}),
        ...(err.nextRetryDelay != null ? { nextRetryDelay: err.nextRetryDelay } : {}),
        ...(err.category != null ? { category: err.category } : {}),
      });
    }
    throw err;
  }
}
