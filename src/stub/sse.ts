/** Writes a finished message as the Messages API's server-sent event stream. */
import type { ServerResponse } from 'node:http';

type Block = { type: string; [k: string]: unknown };

function chunks(text: string, parts: number): string[] {
  if (!text) return [];
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

export function writeSse(res: ServerResponse, message: Record<string, unknown>): void {
  const send = (event: string, data: unknown): void => {
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  const usage = message.usage as Record<string, number>;
  send('message_start', { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  send('ping', { type: 'ping' });
  (message.content as Block[]).forEach((block, index) => {
    if (block.type === 'text') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } });
      for (const text of chunks(String(block.text), 3)) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
    } else if (block.type === 'tool_use') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      for (const partial_json of chunks(JSON.stringify(block.input), 3)) {
        send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
      }
    } else if (block.type === 'thinking') {
      send('content_block_start', { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const thinking of chunks(String(block.thinking), 2)) send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking } });
      send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
    } else {
      send('content_block_start', { type: 'content_block_start', index, content_block: block });
    }
    send('content_block_stop', { type: 'content_block_stop', index });
  });
  send('message_delta', { type: 'message_delta', delta: { stop_reason: message.stop_reason, stop_sequence: null }, usage });
  send('message_stop', { type: 'message_stop' });
  res.end();
}
