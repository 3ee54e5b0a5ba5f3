/**
 * What `mcp-turns run` does when a call of its turn waits for approval: on a terminal it asks
 * (`run files__write_file {"path":…}? [y/N]`) and sends the answer; otherwise it prints the
 * `approve` and `deny` commands to run and the turn keeps waiting.
 */
import readline from 'node:readline/promises';
import type { Client } from '@temporalio/client';
import { ApprovalDecisionError, InvalidAnswerError, approveToolCall, denyToolCall } from '../client/approvals';
import type { ApprovalRecord } from '../core/approvals';
import { oneLine } from '../core/text';

/** Arguments shown in the question. */
const INPUT_CHARS = 80;

/** A shell word: quoted unless it is plain. */
export function shellWord(value: string): string {
  return /^[A-Za-z0-9_./:@=-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** The `--address`/`--namespace` flags a command was given, to repeat in the printed commands. */
export function connectionArgs(flags: { address?: string | undefined; namespace?: string | undefined }): string[] {
  return [...(flags.address ? ['--address', flags.address] : []), ...(flags.namespace ? ['--namespace', flags.namespace] : [])];
}

/** The question for a waiting call. */
export function approvalQuestion(call: Pick<ApprovalRecord, 'name'> & { input?: unknown }): string {
  return `run ${call.name} ${oneLine(JSON.stringify(call.input ?? {}), INPUT_CHARS)}? [y/N] `;
}

/** The lines telling how to decide a waiting call from another shell. */
export function approvalHint(turnId: string, call: Pick<ApprovalRecord, 'name' | 'callId'> & { input?: unknown }, connectionArgs: string[] = []): string {
  const tail = [turnId, call.callId, ...connectionArgs].map(shellWord).join(' ');
  return [
    `waiting for approval: ${call.name} ${oneLine(JSON.stringify(call.input ?? {}), INPUT_CHARS)} (call ${call.callId})`,
    `  approve: mcp-turns approve ${tail}`,
    `  deny:    mcp-turns deny ${tail} --reason '…'`,
  ].join('\n');
}

/** Asks one question on the terminal (a reader of its own, on stderr); undefined when `signal` ends the wait first. */
export async function askOnStderr(question: string, signal: AbortSignal): Promise<string | undefined> {
  const rl = readline.createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question, { signal });
  } catch (err) {
    if (signal.aborted) return undefined;
    throw err;
  } finally {
    rl.close();
  }
}

export interface ApprovalPromptOptions {
  client: Client;
  turnId: string;
  /** Who decides (recorded with the decision). */
  identity: string;
  /** Ask on the terminal (stdin is a TTY); otherwise print the commands. */
  interactive: boolean;
  /** `--address`/`--namespace` to repeat in the printed commands. */
  connectionArgs?: string[];
  /** Aborted when the turn ends: a question still open is dropped. */
  signal: AbortSignal;
  /** Asks on the terminal (default: a reader of its own per question); `chat` passes its session's reader. */
  ask?: (question: string, signal: AbortSignal) => Promise<string | undefined>;
}

/** A call waiting for approval, as the turn's stream announces it. */
export type WaitingCall = Pick<ApprovalRecord, 'callId' | 'name'> & { input?: unknown };

/** Handles each waiting call once, one at a time in the order they came: asks and decides it, or prints how to. */
export class ApprovalPrompt {
  private readonly handled = new Set<string>();
  private queue: Promise<void> = Promise.resolve();
  /** The call whose question is open now. */
  private open: { callId: string; question: AbortController } | undefined;

  constructor(private readonly opts: ApprovalPromptOptions) {}

  /** Hands on a call waiting for approval; its question waits for those before it. */
  waiting(call: WaitingCall): void {
    this.queue = this.queue.then(() => this.handle(call));
  }

  /** Resolves once every call handed on has been asked about, or given up when the turn ended. */
  settled(): Promise<void> {
    return this.queue;
  }

  /** A call decided (here or elsewhere) or no longer waiting: not asked about, its open question dropped. */
  decided(callId: string): void {
    this.handled.add(callId);
    if (this.open?.callId === callId) this.open.question.abort();
  }

  private async handle(call: WaitingCall): Promise<void> {
    if (this.handled.has(call.callId) || this.opts.signal.aborted) return;
    this.handled.add(call.callId);
    const question = new AbortController();
    const ended = (): void => question.abort();
    this.opts.signal.addEventListener('abort', ended, { once: true });
    this.open = { callId: call.callId, question };
    let answer: string | undefined;
    try {
      answer = this.opts.interactive ? await (this.opts.ask ?? askOnStderr)(approvalQuestion(call), question.signal).catch(() => undefined) : undefined;
    } finally {
      this.open = undefined;
      this.opts.signal.removeEventListener('abort', ended);
    }
    if (question.signal.aborted) return;
    if (answer === undefined) {
      // Not a terminal (or it closed): the turn keeps waiting for a decision made elsewhere.
      process.stderr.write(`${approvalHint(this.opts.turnId, call, this.opts.connectionArgs)}\n`);
      return;
    }
    const approve = /^y(es)?$/i.test(answer.trim());
    const decide = approve ? approveToolCall : denyToolCall;
    try {
      await decide(this.opts.client, this.opts.turnId, call.callId, { identity: this.opts.identity });
      process.stderr.write(`${approve ? 'approved' : 'denied'} ${call.name} (call ${call.callId})\n`);
    } catch (err) {
      // Decided elsewhere, timed out while the question was open, or not sent: the turn goes on
      // waiting (or without this answer), and the run keeps following it.
      const why = err instanceof ApprovalDecisionError ? err.message : `could not send the decision: ${(err as Error).message}`;
      process.stderr.write(`not applied: ${why}\n`);
      // A call waiting for the server's questions is answered with `respond` (src/cli/commands/respond.ts).
      if (err instanceof InvalidAnswerError) {
        const tail = [this.opts.turnId, call.callId, ...(this.opts.connectionArgs ?? [])].map(shellWord).join(' ');
        process.stderr.write(`  answer: mcp-turns respond ${tail} --data '<json>' (see mcp-turns approvals)\n`);
      }
    }
  }
}
