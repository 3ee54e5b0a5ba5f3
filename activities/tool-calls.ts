/**
 * The tool-call activity: a thin wrapper binding the worker's tools (its MCP servers and tool
 * modules: src/tools/toolbox.ts) to the activity context. Run as a regular activity it heartbeats
 * while it waits and on every MCP progress notification (a local one has no heartbeat: its workflow
 * task is kept alive instead). It turns the activity's cancellation into an AbortSignal on the call
 * (an MCP server gets `notifications/cancelled`, a code tool its `abortSignal`). A legacy-era
 * server's question during the call is put to a person through the turn (./live-input.ts). Its
 * failures carry the attempt they happened on (./attempt.ts).
 */
import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { CallToolInput, CallToolOutput } from '../src/core/contracts';
import type { Toolbox } from '../src/tools/toolbox';
import { toolCallName } from '../src/core/tool-call-activity';
import { stampingAttempt } from './attempt';
import { heartbeatingWhile } from './heartbeat';
import { askThroughTurn } from './live-input';

/** A worker's own dynamic activity, which ours hands every type that is not a tool call. */
export type DynamicActivity = (...args: unknown[]) => Promise<unknown>;

export function makeToolCallActivities(tools: Pick<Toolbox, 'callTool'>, otherDynamic?: DynamicActivity) {
  const callTool = async (input: CallToolInput): Promise<CallToolOutput> => {
    const ctx = Context.current();
    const started = Date.now();
    // Progress keeps the MCP request alive in both cases (up to max_total_timeout_ms).
    const call = (): Promise<Omit<CallToolOutput, 'attempt'>> =>
      tools.callTool(input, {
        signal: ctx.cancellationSignal,
        turnId: ctx.info.workflowExecution?.workflowId ?? '',
        onProgress: (p) => {
          if (!ctx.info.isLocal) ctx.heartbeat({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}) });
        },
        onInputRequest: (requests, timeoutMs) => askThroughTurn(ctx, input.toolUseId, requests, timeoutMs),
      });
    // A failure names its call too (see CallToolOutput.toolUseId).
    const out = await stampingAttempt(ctx, () => (ctx.info.isLocal ? call() : heartbeatingWhile(ctx, call)), undefined, [{ toolUseId: input.toolUseId }]);
    // History keeps every result: fields saying "nothing" are left out.
    const { artifacts, truncatedBytes, ...rest } = out;
    return {
      ...rest,
      ...(artifacts?.length ? { artifacts } : {}),
      ...(truncatedBytes ? { truncatedBytes } : {}),
      attempt: ctx.info.attempt,
      durationMs: Date.now() - started,
      toolUseId: input.toolUseId,
    };
  };
  return {
    /** One tool call, as an activity of its own; see Toolbox.callTool for what is returned and what is thrown. */
    callTool,
    /**
     * One tool call run as a local activity, whose type is the call's name
     * (src/core/tool-call-activity.ts): Temporal's dynamic activity, the one for any type not
     * registered. Any other type goes to the worker's own dynamic activity, or is refused as the
     * worker refuses an unknown one.
     */
    async default(...args: unknown[]): Promise<unknown> {
      const { activityType, isLocal } = Context.current().info;
      const input = args[0] as Partial<CallToolInput> | undefined;
      if (isLocal && typeof input?.server === 'string' && typeof input.tool === 'string' && activityType === toolCallName(input.server, input.tool)) {
        return callTool(input as CallToolInput);
      }
      if (otherDynamic) return otherDynamic(...args);
      throw ApplicationFailure.create({ type: 'NotFoundError', message: `Activity function ${activityType} is not registered on this Worker`, nonRetryable: true });
    },
  };
}

/** The tool-call activities' type: what the workflow schedules and the worker registers. */
export type ToolCallActivities = ReturnType<typeof makeToolCallActivities>;
