/**
 * What `mcp-turns show <conversation id>` prints: the conversation's status (from its status query
 * while it runs, its result once it has ended), one line per turn (the question, the answer or the
 * error, tool calls, tokens; its approvals) read from the child turns, and a summary of the
 * transcript those turns make up. Turns are found by their ids (`<conversation>-turn-<n>`), so
 * nothing depends on visibility being up to date.
 */
import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import type { ApprovalRecord } from '../core/approvals';
import { conversationTurnId, type ConversationStatus } from '../core/conversation';
import { oneLine } from '../core/text';
import type { ChatTurnResult } from '../core/turn-result';
import type { TokenUsage } from '../core/usage';
import { conversationStatusQuery } from '../core/workflow-handlers';
import { getTurnView } from './turn-view';
import { runStatusOf } from './run-status';
import { runHealth, type RunHealth } from './run-health';

/** Turns read at once. */
const CONCURRENCY = 8;
/** A status query (it needs a worker) that has not answered after this long is left out. */
const QUERY_TIMEOUT_MS = 5000;

export interface ConversationTurnSummary {
  /** 1-based, in order of arrival. */
  number: number;
  turnId: string;
  /** The turn's status (src/core/run-status.ts): completed, running, failed, … */
  status: string;
  question?: string;
  answer?: string;
  stopReason?: string;
  toolCalls?: number;
  usage?: TokenUsage;
  costUsd?: number;
  /** The calls that waited for approval, with their decisions; while it runs, the calls waiting now. */
  approvals?: ApprovalRecord[];
  /** While it runs: its phase and step. */
  now?: string;
  error?: string;
  /** The turn's own messages (question to answer), for the transcript summary. */
  messages?: number;
  toolResults?: number;
  bytes?: number;
}

export interface ConversationSummary {
  conversationId: string;
  /** The conversation's status (src/core/run-status.ts): running, completed, … */
  status: string;
  startTime: string;
  closeTime?: string;
  /** The status query's answer while it runs (absent when no worker answered it, or none can). */
  live?: ConversationStatus;
  /** While it runs: whether a worker polls its task queue and whether its workflow task fails. */
  health?: RunHealth;
  turns: ConversationTurnSummary[];
  /** Every turn's own messages together: the conversation as it was asked, before any compaction. */
  transcript: { messages: number; toolResults: number; bytes: number };
}

async function exists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return false;
    throw err;
  }
}

/** How many turns the conversation ran: from its status or result, else by looking their ids up. */
async function turnCount(client: Client, conversationId: string, known: number | undefined): Promise<number> {
  let n = known ?? 0;
  while (await exists(client, conversationTurnId(conversationId, n))) n++;
  return n;
}

function summarizeResult(turn: ConversationTurnSummary, result: ChatTurnResult): void {
  const first = result.messages[0]?.content;
  if (typeof first === 'string') turn.question = first;
  turn.answer = result.response.conversation;
  turn.stopReason = result.stopReason;
  turn.toolCalls = result.toolCalls.length;
  turn.usage = result.usage;
  turn.costUsd = result.costUsd;
  if (result.approvals?.length) turn.approvals = result.approvals;
  turn.messages = result.messages.length;
  turn.toolResults = result.messages.reduce((n, m) => n + (typeof m.content === 'string' ? 0 : m.content.filter((b) => b.type === 'tool_result').length), 0);
  turn.bytes = Buffer.byteLength(JSON.stringify(result.messages));
}

async function summarizeTurn(client: Client, conversationId: string, index: number): Promise<ConversationTurnSummary> {
  const turnId = conversationTurnId(conversationId, index);
  const turn: ConversationTurnSummary = { number: index + 1, turnId, status: 'unknown' };
  try {
    const t = await getTurnView(client, turnId);
    turn.status = t.status;
    if (t.question) turn.question = t.question;
    if (t.result) summarizeResult(turn, t.result);
    if (t.progress) {
      turn.now = `${t.progress.phase}, step ${t.progress.step}`;
      if (t.progress.pendingApprovals.length) turn.approvals = t.progress.pendingApprovals;
    }
    if (t.error) turn.error = t.error;
  } catch (err) {
    turn.error = oneLine((err as Error).message, 300);
  }
  return turn;
}

/** Reads a conversation (what `show` prints). The caller has checked that the workflow is a conversation. */
export async function getConversationSummary(client: Client, conversationId: string): Promise<ConversationSummary> {
  const handle = client.workflow.getHandle(conversationId);
  const d = await handle.describe();
  const summary: ConversationSummary = {
    conversationId,
    status: runStatusOf(d.status.name),
    startTime: d.startTime.toISOString(),
    turns: [],
    transcript: { messages: 0, toolResults: 0, bytes: 0 },
  };
  if (d.closeTime) summary.closeTime = d.closeTime.toISOString();
  let known: number | undefined;
  if (d.status.name === 'RUNNING') {
    summary.health = await runHealth(client, d);
    // A query needs a worker that can run the conversation: not asked when none can.
    if (!summary.health.noWorker && !summary.health.failingTask) {
      try {
        summary.live = await client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, () => handle.query(conversationStatusQuery));
        known = summary.live.turns + (summary.live.currentTurnId ? 1 : 0);
      } catch {
        // no worker answered: the turns are found by their ids
      }
    }
  } else if (d.status.name === 'COMPLETED') {
    known = ((await handle.result()) as { turns?: number }).turns;
  }
  const count = await turnCount(client, conversationId, known);
  const turns: ConversationTurnSummary[] = new Array<ConversationTurnSummary>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(CONCURRENCY, count) }, async () => {
      while (next < count) {
        const i = next++;
        turns[i] = await summarizeTurn(client, conversationId, i);
      }
    }),
  );
  summary.turns = turns;
  for (const t of turns) {
    summary.transcript.messages += t.messages ?? 0;
    summary.transcript.toolResults += t.toolResults ?? 0;
    summary.transcript.bytes += t.bytes ?? 0;
  }
  return summary;
}
