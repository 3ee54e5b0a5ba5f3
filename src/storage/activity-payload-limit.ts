/**
 * With storage off, an activity result over Temporal's payload limit fails the activity at once,
 * non-retryably, with one line that names the activity and the result's size (payload-limit.ts).
 * Without this the SDK would refuse the upload with a message naming neither, and Temporal would
 * retry the activity only to produce the same result again.
 */
import { defaultPayloadConverter } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { payloadTooLargeFailure, TEMPORAL_PAYLOAD_LIMIT } from './payload-limit';
import { payloadSize } from './stored-payload';

/** Activity interceptors that refuse results of `limit` bytes or more. */
export function activityResultLimit(limit = TEMPORAL_PAYLOAD_LIMIT): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const result = await next(input);
        if (result === undefined) return result;
        const size = payloadSize(defaultPayloadConverter.toPayload(result));
        if (size < limit) return result;
        const { activityType, workflowType, workflowExecution } = ctx.info;
        const of = workflowExecution ? ` (workflow ${workflowType} ${workflowExecution.workflowId})` : '';
        throw payloadTooLargeFailure(`the result of activity ${activityType}${of}`, size, limit);
      },
    },
  });
}
