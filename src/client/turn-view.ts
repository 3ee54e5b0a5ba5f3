/**
 * A turn as a person looks it up (what `mcp-turns show` prints): its question, status and, once
 * finished, its result or its failure; while it runs, its live progress.
 */
import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { ChatTurnInput } from '../schemas/turn-input';
import { turnProgressQuery } from '../core/workflow-handlers';
import type { ChatTurnResult, TurnProgress } from '../core/turn-result';
import { describeFailure } from './describe-failure';

/** A turn's status and, by its status, its result, progress or failure. */
export interface TurnView {
  workflowId: string;
  status: string;
  question?: string;
  input?: ChatTurnInput;
  startTime?: string;
  closeTime?: string;
  result?: ChatTurnResult;
  progress?: TurnProgress;
  error?: string;
}

/** Looks up the turn `workflowId`: its input, status and, by its status, its result, progress or failure. */
export async function getTurnView(client: Client, workflowId: string): Promise<TurnView> {
  const handle = client.workflow.getHandle(workflowId);
  const d = await handle.describe();
  const view: TurnView = { workflowId, status: d.status.name, startTime: d.startTime.toISOString() };
  if (d.closeTime) view.closeTime = d.closeTime.toISOString();
  const history = await handle.fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  if (payload) {
    view.input = client.options.loadedDataConverter.payloadConverter.fromPayload<ChatTurnInput>(payload);
    view.question = view.input.question;
  }
  if (d.status.name === 'COMPLETED') view.result = (await handle.result()) as ChatTurnResult;
  else if (d.status.name === 'RUNNING') view.progress = await handle.query(turnProgressQuery);
  else {
    try {
      await handle.result();
    } catch (err) {
      view.error = err instanceof WorkflowFailedError ? describeFailure(err) : (err as Error).message;
    }
  }
  return view;
}
