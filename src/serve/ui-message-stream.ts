/**
 * One turn's stream events as the chunks of the Vercel AI SDK's UI message stream protocol (what
 * `useChat` reads): one assistant message per turn, possibly in several HTTP responses (a stream
 * pauses while calls wait for approval; the next one continues the same message from an offset).
 * The chunk types below are the subset of the SDK's `UIMessageChunk` we send, written here because
 * `ai` is only a dev dependency.
 *
 * Rules:
 * - Texts and reasoning open lazily (`text-start` before an id's first delta) and close at
 *   `finish-step`, at `finish` and at the end of the message; the protocol forgets every open part
 *   at `finish-step`, so every open part closes there.
 * - A part's UI id is the event's id until a `data-retry` discards it; the protocol cannot take text
 *   back, so the next delta opens a new part, `<id>~<offset of the retry>` (unique across the streams
 *   of one turn). `data-retry` lists the superseded UI ids so a page can hide those parts; text parts
 *   carry no id in a UI message, so every part names its UI id in `providerMetadata.mcpTurns.id`.
 * - Tool calls are dynamic tools titled `server · tool`; Claude's server tools (web search…) are
 *   `providerExecuted`, titled `Claude · <tool>`. An approval request's id is
 *   `<turnId>/<callId>`; a denial or a timed-out wait answers the call with `tool-output-denied`
 *   once, and every decision is also a `data-approval` part (who, why).
 * - A call whose server asks the person questions is a `data-input` part per round of questions (id
 *   {@link inputPartIdOf}: the call id and the round): waiting with the questions, then replaced
 *   (`useChat` reconciles data parts of one type and id) by its end, answered, declined or timed
 *   out, by whom, with the questions still. The answer goes to `POST /v1/approvals/{turn}/{call}`;
 *   the stream does not pause for it (it is no approval `useChat` could answer): it stays open and
 *   goes on with the call's result once the call is sent again with the answer.
 * - A call that did not run: denied ones are denials, the others name why (`not run: repeated`).
 * - The end carries the offset after the last event pushed: a client sends it back to continue.
 * - What the turn offers Claude (`data-tools`) is a `data-tools` part at the start of the message,
 *   before its first step.
 * - A turn's `output` is one `data-output` part (id {@link OUTPUT_PART_ID}): each `data-output`
 *   event replaces it (`useChat` reconciles data parts of one type and id), growing while `partial`,
 *   then the result's object.
 * - The finish reason: `stop` for a turn that answered (`stop_sequence` too), `length` at a limit,
 *   `content-filter` for a refusal, `error` for a failed turn and for `invalid_output` (the object
 *   asked for is missing: the turn did not do what it was asked), `other` for a turn cancelled,
 *   terminated or timed out.
 * - A turn's `error` is sent after the end's `finish`: `useChat` stops reading at an `error` chunk
 *   (and keeps what came before), so sent in place it would lose the end's metadata.
 */
import type { TurnStreamEvent, TurnTools } from '../core/stream-events';
import type { TurnResponse } from '../core/response';
import type { TurnStopReason } from '../core/turn-result';
import type { TokenUsage } from '../core/usage';

export type UiFinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/**
 * How a part names its UI id (a text part has no id of its own in a UI message). A type, not an
 * interface: it must fit the SDK's `Record<string, Record<string, JSONValue>>`.
 */
export type UiPartMetadata = { mcpTurns: { id: string } };

export interface UiMessageMetadata {
  turnId: string;
  /** The offset after the last event sent: where a continuation starts. */
  offset?: number;
  status?: string;
  stopReason?: TurnStopReason;
  usage?: TokenUsage;
  costUsd?: number;
}

/** The id of the message's one `data-output` part: each update replaces it. */
export const OUTPUT_PART_ID = 'output';

/** A `data-output` part's data: the answer's object, as far as written while `partial`. */
export type UiOutputData = { output: unknown; partial: boolean };

export type UiApprovalData = {
  toolCallId: string;
  state: 'approved' | 'denied' | 'timed_out';
  by?: string;
  reason?: string;
};

/** A `data-input` part's data: one round of a call's questions, as the turn's `data-input` event has it. */
export type UiInputData = Omit<Extract<TurnStreamEvent, { type: 'data-input' }>, 'type' | 'offset' | 'turnId'>;

/** The id of the `data-input` part of round `round` of call `callId`'s questions. */
export function inputPartIdOf(callId: string, round: number): string {
  return `${callId}:${round}`;
}

type PartKind = 'text' | 'reasoning';
type PartChunk<K extends PartKind> =
  | { type: `${K}-start`; id: string; providerMetadata: UiPartMetadata }
  | { type: `${K}-delta`; id: string; delta: string }
  | { type: `${K}-end`; id: string };

export type UiChunk =
  | { type: 'start'; messageId?: string; messageMetadata: UiMessageMetadata }
  | { type: 'finish'; finishReason: UiFinishReason; messageMetadata: UiMessageMetadata }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | PartChunk<'text'>
  | PartChunk<'reasoning'>
  | {
      type: 'tool-input-available';
      toolCallId: string;
      toolName: string;
      /** Run by the model's provider (Claude's server tools), not by the worker. */
      providerExecuted?: true;
      input: unknown;
      dynamic: true;
      title?: string;
    }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown; dynamic: true; providerExecuted?: true }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string; providerExecuted?: true }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'error'; errorText: string }
  | { type: 'data-retry'; data: { superseded: string[]; reason: string; attempt: number } }
  | { type: 'data-compaction'; data: { step: number; reason: string } }
  | { type: 'data-approval'; data: UiApprovalData }
  | { type: 'data-input'; id: string; data: UiInputData }
  | { type: 'data-tools'; data: TurnTools }
  | { type: 'data-output'; id: string; data: UiOutputData }
  | { type: 'data-answer'; data: TurnResponse };

/** The approval id of call `callId` of turn `turnId`. */
export function approvalIdOf(turnId: string, callId: string): string {
  return `${turnId}/${callId}`;
}

/** The turn and call an approval id names (a turn id may hold '/', a call id may not). */
export function parseApprovalId(approvalId: string): { turnId: string; callId: string } | undefined {
  const at = approvalId.lastIndexOf('/');
  if (at <= 0 || at === approvalId.length - 1) return undefined;
  return { turnId: approvalId.slice(0, at), callId: approvalId.slice(at + 1) };
}

type Finish = Extract<TurnStreamEvent, { type: 'finish' }>;

/** A text or reasoning id of the events: its current UI id, and whether that part is open. */
interface Part {
  uiId: string;
  open?: PartKind;
}

export class UiMessageStream {
  private readonly turnId: string;
  private readonly messageId: string | undefined;
  private readonly parts = new Map<string, Part>();
  private readonly waiting = new Set<string>();
  private readonly denied = new Set<string>();
  private offset = 0;
  private finishEvent: Finish | undefined;
  private readonly errors: UiChunk[] = [];

  constructor(opts: { turnId: string; messageId?: string }) {
    this.turnId = opts.turnId;
    this.messageId = opts.messageId;
  }

  /** The `start` chunk. */
  start(): UiChunk[] {
    return [
      {
        type: 'start',
        ...(this.messageId !== undefined ? { messageId: this.messageId } : {}),
        messageMetadata: { turnId: this.turnId },
      },
    ];
  }

  /** Approval requests sent and not yet answered in the stream. */
  get waitingApprovals(): number {
    return this.waiting.size;
  }

  /** True once the turn's `finish` was pushed. */
  get finished(): boolean {
    return this.finishEvent !== undefined;
  }

  /** The chunks for one event (in offset order). */
  push(event: TurnStreamEvent): UiChunk[] {
    this.offset = event.offset + 1;
    switch (event.type) {
      case 'start':
        return [];
      case 'data-tools': {
        const { offered, deferred, dropped, unavailable } = event;
        return [{ type: 'data-tools', data: { offered, deferred, dropped, unavailable } }];
      }
      case 'start-step':
        return [{ type: 'start-step' }];
      case 'finish-step':
        return [...this.closeAll(), { type: 'finish-step' }];
      case 'text-delta':
        return this.delta('text', event.id, event.delta);
      case 'reasoning-delta':
        return this.delta('reasoning', event.id, event.delta);
      case 'data-retry': {
        const out: UiChunk[] = [];
        const superseded: string[] = [];
        for (const id of event.discard) {
          const part = this.parts.get(id) ?? { uiId: id };
          if (part.open) out.push({ type: `${part.open}-end`, id: part.uiId });
          superseded.push(part.uiId);
          this.parts.set(id, { uiId: `${id}~${event.offset}` });
        }
        out.push({ type: 'data-retry', data: { superseded, reason: event.reason, attempt: event.attempt } });
        return out;
      }
      case 'data-compaction':
        return [{ type: 'data-compaction', data: { step: event.step, reason: event.reason } }];
      case 'tool-input-available':
        return [
          {
            type: 'tool-input-available',
            toolCallId: event.toolCallId,
            toolName: event.toolName,
            input: event.input,
            dynamic: true,
            ...(event.server !== undefined && event.tool !== undefined
              ? { title: `${event.server} · ${event.tool}` }
              : {}),
            ...(event.providerExecuted ? { providerExecuted: true as const, title: `Claude · ${event.toolName}` } : {}),
          },
        ];
      case 'data-approval': {
        const { toolCallId, state } = event;
        if (state === 'waiting') {
          this.waiting.add(toolCallId);
          return [
            { type: 'tool-approval-request', approvalId: approvalIdOf(this.turnId, toolCallId), toolCallId },
          ];
        }
        this.waiting.delete(toolCallId);
        const data: UiApprovalData = {
          toolCallId,
          state,
          ...(event.by !== undefined ? { by: event.by } : {}),
          ...(event.reason !== undefined ? { reason: event.reason } : {}),
        };
        const out: UiChunk[] = [];
        if (state !== 'approved') out.push(...this.deny(toolCallId));
        out.push({ type: 'data-approval', data });
        return out;
      }
      case 'data-input': {
        const { type: _type, offset: _offset, turnId: _turnId, ...data } = event;
        return [{ type: 'data-input', id: inputPartIdOf(event.toolCallId, event.round), data }];
      }
      case 'tool-output-available': {
        const { toolCallId, notRun } = event;
        this.waiting.delete(toolCallId);
        if (notRun === 'denied') return this.deny(toolCallId);
        if (event.isError)
          return [
            {
              type: 'tool-output-error',
              toolCallId,
              errorText: event.output || (notRun ? `not run: ${notRun}` : 'the tool call failed'),
              ...(event.providerExecuted ? { providerExecuted: true as const } : {}),
            },
          ];
        const output = event.output ?? (notRun ? `not run: ${notRun}` : '');
        return [{ type: 'tool-output-available', toolCallId, output, dynamic: true, ...(event.providerExecuted ? { providerExecuted: true as const } : {}) }];
      }
      case 'data-output':
        return [{ type: 'data-output', id: OUTPUT_PART_ID, data: { output: event.output, partial: event.partial } }];
      case 'data-answer':
        return [{ type: 'data-answer', data: event.response }];
      case 'error':
        this.errors.push({ type: 'error', errorText: event.errorText });
        return [];
      case 'finish':
        this.finishEvent = event;
        return this.closeAll();
    }
  }

  /**
   * The chunks that end this message: open parts close, then `finish` with the offset to continue
   * from, then the turn's error if it had one. `why`: the turn finished, calls wait for approval
   * (`tool-calls`), or the stream was cut.
   */
  end(why: 'finished' | 'approval' | 'aborted'): UiChunk[] {
    const f = this.finishEvent;
    const metadata: UiMessageMetadata = {
      turnId: this.turnId,
      offset: this.offset,
      ...(f
        ? {
            status: f.status,
            ...(f.stopReason !== undefined ? { stopReason: f.stopReason } : {}),
            ...(f.usage !== undefined ? { usage: f.usage } : {}),
            ...(f.costUsd !== undefined ? { costUsd: f.costUsd } : {}),
          }
        : {}),
    };
    const finishReason: UiFinishReason =
      why === 'approval' ? 'tool-calls' : why === 'finished' && f ? finishReasonOf(f) : 'other';
    return [
      ...this.closeAll(),
      { type: 'finish', finishReason, messageMetadata: metadata },
      ...this.errors.splice(0),
    ];
  }

  private delta(kind: PartKind, id: string, delta: string): UiChunk[] {
    let part = this.parts.get(id);
    if (!part) this.parts.set(id, (part = { uiId: id }));
    const out: UiChunk[] = [];
    if (part.open !== kind) {
      if (part.open) out.push({ type: `${part.open}-end`, id: part.uiId });
      out.push({ type: `${kind}-start`, id: part.uiId, providerMetadata: { mcpTurns: { id: part.uiId } } });
      part.open = kind;
    }
    out.push({ type: `${kind}-delta`, id: part.uiId, delta });
    return out;
  }

  private closeAll(): UiChunk[] {
    const out: UiChunk[] = [];
    for (const part of this.parts.values()) {
      if (!part.open) continue;
      out.push({ type: `${part.open}-end`, id: part.uiId });
      part.open = undefined;
    }
    return out;
  }

  /** `tool-output-denied`, once per call. */
  private deny(toolCallId: string): UiChunk[] {
    if (this.denied.has(toolCallId)) return [];
    this.denied.add(toolCallId);
    return [{ type: 'tool-output-denied', toolCallId }];
  }
}

function finishReasonOf(f: Finish): UiFinishReason {
  if (f.status === 'failed') return 'error';
  if (f.status !== 'completed') return 'other';
  if (f.stopReason === 'refusal') return 'content-filter';
  if (f.stopReason === 'invalid_output') return 'error';
  if (f.stopReason?.startsWith('max_') || f.stopReason === 'context_window') return 'length';
  return 'stop';
}
