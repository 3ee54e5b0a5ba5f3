/**
 * What `mcp-turns chat` shows while a message is answered: the conversation's status query names
 * the turn it runs now (`currentTurnId`), and that turn's progress query gives its steps and tool
 * calls, printed as they happen; calls waiting for approval go to an {@link ApprovalPrompt} of
 * their turn, and the turn's failing calls (Claude unreachable, attempt 4, …) are printed as
 * `failingCalls` finds them. A query that fails or hangs (no worker right now, a server restarting)
 * is skipped: the next poll tries again.
 */
import type { Client } from '@temporalio/client';
import type { TurnProgress } from '../core/turn-result';
import { conversationStatusQuery, turnProgressQuery } from '../core/workflow-handlers';
import type { ApprovalPrompt } from './approval-prompt';
import type { FailingCalls } from '../client/failing-calls';
import { ProgressLines } from './progress-lines';

/** How often the queries are asked. */
const POLL_MS = 300;
/** A query that has not answered after this long is given up for this poll. */
const QUERY_TIMEOUT_MS = 5000;

export interface ConversationProgressOptions {
  client: Client;
  conversationId: string;
  /** Where the progress lines go. */
  write: (line: string) => void;
  /** The running turn's failing calls (it describes the turn at most as often as it was made to). */
  failingCalls: FailingCalls;
  /** Where a failing call's lines go (on a terminal too: the stream does not say why a call is retried). */
  warn: (line: string) => void;
  /** Makes the approval prompt of a turn (ask on the terminal, or print the commands). */
  approvalsFor: (turnId: string, signal: AbortSignal) => ApprovalPrompt;
  /** Aborted once the message's outcome is in: the polling (and any open question) ends. */
  signal: AbortSignal;
}

/** Resolves after `ms`, or at once when `signal` is aborted. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/**
 * The query's answer, or undefined when it fails, takes too long or `signal` ends the wait. The
 * gRPC call itself is cancelled then (deadline, abort signal), so none is left running, or retried,
 * after the command closes its connection.
 */
async function ask<T>(client: Client, query: () => Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  // A signal of this call's own: the SDK leaves a listener on the signal it is given.
  const call = new AbortController();
  const onAbort = (): void => call.abort();
  signal.addEventListener('abort', onAbort);
  try {
    return await client.withAbortSignal(call.signal, () => client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, query));
  } catch {
    return undefined;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/**
 * Polls until `signal` is aborted (see the module comment); resolves with the tool calls it printed
 * (`<turn id>:<call id>`).
 */
export async function followConversation(opts: ConversationProgressOptions): Promise<Set<string>> {
  const { client, signal, write } = opts;
  const conversation = client.workflow.getHandle(opts.conversationId);
  const lines = new ProgressLines('  ');
  const prompts = new Map<string, ApprovalPrompt>();
  while (!signal.aborted) {
    const status = await ask(client, () => conversation.query(conversationStatusQuery), signal);
    const turnId = status?.currentTurnId;
    if (turnId) {
      const failing = await ask(client, () => opts.failingCalls.lines(turnId), signal);
      if (!signal.aborted) for (const line of failing ?? []) opts.warn(`  ${line}`);
    }
    if (turnId && !signal.aborted) {
      const p: TurnProgress | undefined = await ask(client, () => client.workflow.getHandle(turnId).query(turnProgressQuery), signal);
      if (p && !signal.aborted) {
        for (const line of lines.next(turnId, p)) write(line);
        if (p.pendingApprovals.length) {
          let prompt = prompts.get(turnId);
          if (!prompt) prompts.set(turnId, (prompt = opts.approvalsFor(turnId, signal)));
          await prompt.handle(p.pendingApprovals);
        }
      }
    }
    await pause(POLL_MS, signal);
  }
  return lines.printedCalls;
}
