/**
 * What `mcp-turns show` prints: a turn's question, status and, once finished, its result; while it
 * runs, its live progress.
 */
import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { ChatTurnInput } from '../schemas/turn-input';
import { turnProgressQuery } from '../core/workflow-handlers';
import type { ChatTurnResult, TurnProgress } from '../core/turn-result';
import { describeFailure } from './describe-failure';

export interface TurnTranscript {
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

export async function getTurnTranscript(client: Client, workflowId: string): Promise<TurnTranscript> {
  const handle = client.workflow.getHandle(workflowId);
  const d = await handle.describe();
  const transcript: TurnTranscript = { workflowId, status: d.status.name, startTime: d.startTime.toISOString() };
  if (d.closeTime) transcript.closeTime = d.closeTime.toISOString();
  const history = await handle.fetchHistory();
  const started = history.events?.[0]?.workflowExecutionStartedEventAttributes;
  const payload = started?.input?.payloads?.[0];
  if (payload) {
    transcript.input = client.options.loadedDataConverter.payloadConverter.fromPayload<ChatTurnInput>(payload);
    transcript.question = transcript.input.question;
  }
  if (d.status.name === 'COMPLETED') transcript.result = (await handle.result()) as ChatTurnResult;
  else if (d.status.name === 'RUNNING') transcript.progress = await handle.query(turnProgressQuery);
  else {
    try {
      await handle.result();
    } catch (err) {
      transcript.error = err instanceof WorkflowFailedError ? describeFailure(err) : (err as Error).message;
    }
  }
  return transcript;
}
