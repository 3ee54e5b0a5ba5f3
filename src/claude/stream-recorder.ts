/**
 * Records a streamed Claude activity's deltas as its stream record (src/core/stream-record.ts) and
 * publishes the record as it grows, at most once per `publishEveryMs` (the first delta at once):
 * the activity publishes it as its heartbeat details, which subscribers read with `describe`.
 * Deltas that arrive between two publications are joined into one part.
 *
 * A step's call records its text (and, when asked, its thinking); the formatter's call records the
 * answer as its forced tool input writes it (the input is partial JSON until the call ends); the
 * call that writes a turn's typed `output` records the answer as its text (the JSON as written).
 */
import type { MessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import { parse as parsePartialJson, Allow } from 'partial-json';
import { partialAnswerText } from '../core/response';
import {
  BLOCK_SEPARATOR,
  compactRecord,
  type FinalTexts,
  type StreamPart,
  type StreamRecord,
  type StreamRequest,
  STREAM_PUBLISH_INTERVAL_MS,
} from '../core/stream-record';
import { FORMATTER_TOOL_NAME } from '../schemas/response-formatter-tool';

type DeltaKind = 't' | 'r' | 'a';

export interface StreamRecorderOptions {
  /** The activity's attempt (1-based). */
  attempt: number;
  /** The record an earlier attempt left (its last heartbeat details), continued after a retry part. */
  previous?: StreamRecord | undefined;
  /** `step`: a loop step's text and thinking; `formatter`: the answer in the formatter's tool input; `output`: the answer as text. */
  call: 'step' | 'formatter' | 'output';
  request: StreamRequest;
  /** Publishes the record (the activity heartbeats it). */
  publish: (record: StreamRecord) => void;
  /** @default STREAM_PUBLISH_INTERVAL_MS */
  publishEveryMs?: number;
}

export class StreamRecorder {
  private readonly parts: StreamPart[];
  private readonly first: number;
  /** Deltas not yet published, by kind, in arrival order of their kinds. */
  private pending: Array<[DeltaKind, string]> = [];
  /** Parts of the current call: a second call of the same attempt (a repair) discards them. */
  private partsOfCall = 0;
  private lastPublish = 0;
  private timer: NodeJS.Timeout | undefined;
  /** Text and thinking blocks seen in this call, for separators. */
  private blocks: Record<'t' | 'r', number> = { t: 0, r: 0 };
  /** The answer text published so far by this call (formatter). */
  private answer = '';
  /** Raw tool input of the formatter call so far. */
  private formatterJson = '';
  private formatterIndex: number | undefined;

  constructor(private readonly options: StreamRecorderOptions) {
    const earlier = options.previous?.parts ?? [];
    this.parts = [...earlier];
    this.first = earlier.length ? (options.previous?.first ?? options.attempt) : options.attempt;
    if (earlier.length)
      this.parts.push([
        'x',
        options.attempt,
        `attempt ${options.attempt - 1} did not finish; Claude is asked again`,
      ]);
  }

  /**
   * The record as it stands, pending deltas included. Whatever is handed out is kept as it is:
   * later deltas go into new parts, so a part a subscriber has seen never grows.
   */
  get record(): StreamRecord {
    this.flushPending();
    return { attempt: this.options.attempt, first: this.first, parts: [...this.parts] };
  }

  /** A new Claude call of this activity (the formatter's repair or fallback): its earlier deltas are void. */
  beginCall(reason: string): void {
    const discards = this.partsOfCall > 0;
    this.partsOfCall = 0;
    this.blocks = { t: 0, r: 0 };
    this.answer = '';
    this.formatterJson = '';
    this.formatterIndex = undefined;
    if (!discards) return;
    this.flushPending();
    this.parts.push(['x', this.options.attempt, reason]);
    this.publishNow();
  }

  /** One event of the SDK's message stream. */
  onEvent(event: MessageStreamEvent): void {
    if (event.type === 'content_block_start') {
      const block = event.content_block;
      if (this.options.call === 'step' && block.type === 'text') this.startBlock('t');
      if (this.options.call === 'step' && block.type === 'thinking' && this.options.request.reasoning)
        this.startBlock('r');
      if (
        this.options.call === 'formatter' &&
        block.type === 'tool_use' &&
        block.name === FORMATTER_TOOL_NAME
      )
        this.formatterIndex = event.index;
      return;
    }
    if (event.type !== 'content_block_delta') return;
    const { delta } = event;
    if (this.options.call === 'output') {
      if (delta.type === 'text_delta') this.add('a', delta.text);
    } else if (this.options.call === 'step') {
      if (delta.type === 'text_delta') this.add('t', delta.text);
      else if (delta.type === 'thinking_delta' && this.options.request.reasoning)
        this.add('r', delta.thinking);
    } else if (delta.type === 'input_json_delta' && event.index === this.formatterIndex) {
      this.formatterJson += delta.partial_json;
      this.addAnswer(partialAnswerText(this.parsedFormatterInput()));
    }
  }

  /**
   * The record for the activity's result: the last attempt's deltas made to join to exactly
   * `texts` (a retry part and the whole texts when what streamed is not their beginning), as
   * lengths.
   */
  finish(texts: FinalTexts): StreamRecord {
    this.stopTimer();
    this.flushPending();
    const streamed = this.lastAttemptTexts();
    const kinds = (['r', 't', 'a'] as const).filter((k) => texts[k] !== undefined || streamed[k]);
    if (kinds.every((k) => (texts[k] ?? '').startsWith(streamed[k] ?? ''))) {
      for (const k of kinds) {
        const rest = (texts[k] ?? '').slice((streamed[k] ?? '').length);
        if (rest) this.parts.push([k, rest]);
      }
    } else {
      this.parts.push(['x', this.options.attempt, 'the final answer differs from what streamed']);
      for (const k of kinds) if (texts[k]) this.parts.push([k, texts[k]]);
    }
    return compactRecord({ attempt: this.options.attempt, first: this.first, parts: this.parts });
  }

  /** The record as it stands, with nothing more to come (a cancelled or failed call). */
  close(): StreamRecord {
    this.stopTimer();
    this.flushPending();
    return { attempt: this.options.attempt, first: this.first, parts: [...this.parts] };
  }

  private startBlock(kind: 't' | 'r'): void {
    if (this.blocks[kind]++ > 0) this.add(kind, BLOCK_SEPARATOR);
  }

  private parsedFormatterInput(): unknown {
    try {
      return parsePartialJson(this.formatterJson, Allow.ALL);
    } catch {
      return undefined;
    }
  }

  /** Publishes the growth of the answer text; a text that is not a continuation waits for one that is. */
  private addAnswer(text: string): void {
    if (text.length <= this.answer.length || !text.startsWith(this.answer)) return;
    const delta = text.slice(this.answer.length);
    this.answer = text;
    this.add('a', delta);
  }

  private add(kind: DeltaKind, delta: string): void {
    if (!delta) return;
    const last = this.pending[this.pending.length - 1];
    if (last && last[0] === kind) last[1] += delta;
    else this.pending.push([kind, delta]);
    this.partsOfCall++;
    this.schedule();
  }

  private schedule(): void {
    if (this.timer) return;
    const every = this.options.publishEveryMs ?? STREAM_PUBLISH_INTERVAL_MS;
    const wait = Math.max(0, this.lastPublish + every - Date.now());
    if (wait === 0) this.publishNow();
    else this.timer = setTimeout(() => this.publishNow(), wait);
  }

  private publishNow(): void {
    this.stopTimer();
    this.flushPending();
    this.lastPublish = Date.now();
    this.options.publish(this.record);
  }

  private flushPending(): void {
    this.parts.push(...this.pending);
    this.pending = [];
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** What the last attempt's deltas say so far, by kind. */
  private lastAttemptTexts(): FinalTexts {
    const out: Record<DeltaKind, string> = { t: '', r: '', a: '' };
    for (const p of this.parts) {
      if (p[0] === 'x') {
        out.t = out.r = out.a = '';
        continue;
      }
      out[p[0]] += String(p[1]);
    }
    return out;
  }
}
