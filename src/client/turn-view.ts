/**
 * A turn as a person looks it up (what `mcp-turns show` prints): its question, status and, once
 * finished, its result or its failure; while it runs, its live progress.
 */
import { WorkflowFailedError, type Client } from '@temporalio/client';
import {
  decodeArrayFromPayloads,
  extstoreInboundOptions,
  visit,
  walkGetWorkflowExecutionHistoryResponse,
} from '@temporalio/common/lib/internal-non-workflow';
import type { ChatTurnInput } from '../schemas/turn-input';
import { TurnHistory } from '../stream/turn-history';
import { recordedProgress } from '../stream/recorded-progress';
import { runHealth, type RunHealth } from './run-health';
import type { ChatTurnResult, TurnProgress } from '../core/turn-result';
import { describeFailure } from './describe-failure';
import { expectKind } from './workflow-kind';
import { runStatusOf } from './run-status';
import { SA_STATUS } from '../core/search-attributes';

/** A turn's status and, by its status, its result, progress or failure. */
export interface TurnView {
  workflowId: string;
  /** In the one vocabulary (src/core/run-status.ts): completed, running, waiting_approval, failed, … */
  status: string;
  question?: string;
  input?: ChatTurnInput;
  startTime?: string;
  closeTime?: string;
  result?: ChatTurnResult;
  progress?: TurnProgress;
  /** While it runs: whether a worker polls its task queue and whether its workflow task fails. */
  health?: RunHealth;
  error?: string;
}

/**
 * Looks up the turn `workflowId`: its input, status and, by its status, its result, progress or
 * failure. Everything comes from what Temporal records (describe, history), never from a query, so
 * a turn no worker can run is answered at once, with why (its health). An id of another kind of
 * workflow throws `WorkflowKindError`.
 */
export async function getTurnView(client: Client, workflowId: string): Promise<TurnView> {
  const handle = client.workflow.getHandle(workflowId);
  const d = await handle.describe();
  expectKind(workflowId, d.type, 'turn');
  const view: TurnView = { workflowId, status: runStatusOf(d.status.name, d.typedSearchAttributes.get(SA_STATUS)), startTime: d.startTime.toISOString() };
  if (d.closeTime) view.closeTime = d.closeTime.toISOString();
  // A running turn's whole history is read for its progress, its input with it; else only its first event.
  const running = d.status.name === 'RUNNING' ? await Promise.all([new TurnHistory(client, workflowId, d.runId).upToNow(), runHealth(client, d)]) : undefined;
  const started = running?.[0].find((f) => f.kind === 'started');
  const input = running ? (started?.kind === 'started' ? started.input : undefined) : await startInput(client, workflowId, d.runId);
  if (input) {
    view.input = input;
    view.question = input.question;
  }
  if (d.status.name === 'COMPLETED') view.result = (await handle.result()) as ChatTurnResult;
  else if (running) {
    view.progress = recordedProgress(running[0]);
    view.health = running[1];
  } else {
    try {
      await handle.result();
    } catch (err) {
      view.error = err instanceof WorkflowFailedError ? describeFailure(err) : (err as Error).message;
    }
  }
  return view;
}

/** The run's input, from its first history event: fetched from storage and decoded (decrypted) as any payload. */
async function startInput(client: Client, workflowId: string, runId: string): Promise<ChatTurnInput | undefined> {
  const converter = client.options.loadedDataConverter;
  const page = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId, runId },
    maximumPageSize: 1,
  });
  await visit(page, walkGetWorkflowExecutionHistoryResponse, extstoreInboundOptions(converter.externalStorage));
  const payloads = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads;
  if (!payloads?.length) return undefined;
  const [input] = await decodeArrayFromPayloads(converter, payloads);
  return input as ChatTurnInput;
}
