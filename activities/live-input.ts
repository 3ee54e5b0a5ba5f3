/**
 * A legacy-era server's question during a live tool call, put to a person by the call's turn: the
 * activity tells its turn (`liveInput` signal; the turn keeps a waiting record of kind `input`, listed
 * and answered like an approval) and reads the answer from the turn's record, polling, until it is
 * answered, declined or timed out (the turn times it out at the call's time left). The activity keeps
 * heartbeating meanwhile. A worker restart ends the call and with it the question: only the modern
 * era's questions outlive a worker.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from '@temporalio/activity';
import type { InputRequest } from '../src/core/input-requests';
import { approvalRecordQuery, liveInputSignal } from '../src/core/workflow-handlers';

/** How often the turn is asked whether the person answered. */
const POLL_MS = 500;

/** Asks the person through the activity's turn; resolves with the answer, or declined. */
export async function askThroughTurn(
  ctx: Context,
  callId: string,
  requests: InputRequest[],
  timeoutMs: number,
): Promise<{ accepted: boolean; input?: Record<string, unknown> }> {
  const execution = ctx.info.workflowExecution;
  if (!execution) return { accepted: false }; // not run by a turn: nobody to ask
  const turn = ctx.client.workflow.getHandle(execution.workflowId, execution.runId);
  const askId = randomUUID();
  await turn.signal(liveInputSignal, { callId, askId, requests, timeoutMs });
  const deadline = Date.now() + timeoutMs + 5 * POLL_MS;
  while (Date.now() < deadline && !ctx.cancellationSignal.aborted) {
    const record = await turn.query(approvalRecordQuery, callId).catch(() => undefined);
    if (record?.live?.askId === askId && record.outcome) {
      return record.outcome === 'approved' ? { accepted: true, ...(record.answer ? { input: record.answer } : {}) } : { accepted: false };
    }
    await ctx.sleep(POLL_MS);
  }
  return { accepted: false };
}
