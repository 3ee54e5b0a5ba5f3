/**
 * Writes a finished message as the Messages API's server-sent event stream, delta by delta as the
 * API does: text and thinking one word at a time (a word with the whitespace after it), a text
 * block's citations first (a `citations_delta` each), a thinking block's signature last, a tool_use
 * or server_tool_use input in small chunks of its JSON text, a server tool's result block whole in
 * its `content_block_start`, the stop reason, stop sequence and code execution container in
 * `message_delta`. `delayMs` separates two consecutive deltas (0: everything at once). A client that
 * disconnects ends the writing; nothing is written after that and nothing throws.
 */
import type { ServerResponse } from 'node:http';

type Block = { type: string; [k: string]: unknown };
type SseEvent = { type: string; [k: string]: unknown };

/** Characters of a tool_use input's JSON text per `input_json_delta`. */
const JSON_CHUNK = 12;

/** One piece per word with its trailing whitespace (leading whitespace on its own); joined, the text. */
function words(text: string): string[] {
  return text.match(/^\s+|\S+\s*/g) ?? [];
}

/** Pieces of `size` code points (a pair of surrogates is never split); joined, the text. */
function jsonChunks(text: string, size = JSON_CHUNK): string[] {
  const points = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < points.length; i += size) out.push(points.slice(i, i + size).join(''));
  return out;
}

function* blockEvents(block: Block, index: number): Generator<SseEvent> {
  const delta = (d: Record<string, unknown>): SseEvent => ({ type: 'content_block_delta', index, delta: d });
  if (block.type === 'text') {
    yield { type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } };
    for (const citation of (block.citations ?? []) as unknown[]) yield delta({ type: 'citations_delta', citation });
    for (const text of words(String(block.text))) yield delta({ type: 'text_delta', text });
  } else if (block.type === 'tool_use' || block.type === 'server_tool_use') {
    yield {
      type: 'content_block_start',
      index,
      content_block: { ...block, input: {} },
    };
    for (const partial_json of jsonChunks(JSON.stringify(block.input))) {
      yield delta({ type: 'input_json_delta', partial_json });
    }
  } else if (block.type === 'thinking') {
    yield {
      type: 'content_block_start',
      index,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    };
    for (const thinking of words(String(block.thinking))) yield delta({ type: 'thinking_delta', thinking });
    yield delta({ type: 'signature_delta', signature: block.signature });
  } else {
    yield { type: 'content_block_start', index, content_block: block };
  }
  yield { type: 'content_block_stop', index };
}

function* messageEvents(message: Record<string, unknown>): Generator<SseEvent> {
  const usage = message.usage as Record<string, unknown>;
  // The container (code execution) is named at the end, in message_delta.
  const container = message.container ?? null;
  yield {
    type: 'message_start',
    message: {
      ...message,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
      ...('container' in message ? { container: null } : {}),
    },
  };
  yield { type: 'ping' };
  const content = message.content as Block[];
  for (let index = 0; index < content.length; index++) yield* blockEvents(content[index]!, index);
  yield { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: message.stop_sequence ?? null, ...(container ? { container } : {}) }, usage };
  yield { type: 'message_stop' };
}

export interface SseOptions {
  /** Milliseconds between two consecutive deltas. @default 0 */
  delayMs?: number;
}

/** Resolves when the stream is written and ended, or as soon as the client has gone. */
export async function writeSse(
  res: ServerResponse,
  message: Record<string, unknown>,
  opts: SseOptions = {},
): Promise<void> {
  const delayMs = opts.delayMs ?? 0;
  let gone = res.destroyed;
  const onClose = (): void => {
    gone = true;
  };
  res.once('close', onClose);
  const pause = (): Promise<void> =>
    new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        res.off('close', done);
        resolve();
      };
      const timer = setTimeout(done, delayMs);
      res.once('close', done);
    });
  try {
    let deltas = 0;
    for (const event of messageEvents(message)) {
      if (event.type === 'content_block_delta' && deltas++ > 0 && delayMs > 0) await pause();
      if (gone || res.destroyed) return;
      res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    }
    res.end();
  } finally {
    res.off('close', onClose);
  }
}
