/** Human-readable rendering of turn results and progress for the terminal. */
import { oneLine } from '../core/text';
import type { Artifact } from '../core/response';
import type { ChatTurnResult, ToolCallRecord } from '../core/turn-result';

export function toolCallLine(c: Pick<ToolCallRecord, 'name' | 'step' | 'isError' | 'durationMs'> & Partial<ToolCallRecord>): string {
  const status = c.repeated ? 'repeated' : c.isError ? 'error' : 'ok';
  const input = c.input !== undefined ? ` ${oneLine(JSON.stringify(c.input), 80)}` : '';
  const err = c.isError && c.error ? ` — ${oneLine(c.error, 100)}` : '';
  return `  step ${c.step} · ${c.name}${input} · ${status} · ${c.durationMs} ms${err}`;
}

/** An artifact's header line and its content (an image as its size). */
export function artifactLines(a: Artifact): string[] {
  return [
    `── artifact ${a.id}: ${a.title} (${a.type}${a.language ? `, ${a.language}` : ''}) ──`,
    a.type.startsWith('image/') ? `[${a.content.length} base64 characters]` : a.content,
  ];
}

/** The result for the terminal; `answer: false` leaves out the answer's text (printed as it streamed). */
export function renderResult(result: ChatTurnResult, uiLink?: string, { answer = true }: { answer?: boolean } = {}): string {
  const lines: string[] = [];
  if (answer) lines.push(result.response.conversation.trim() || '(empty answer)');
  for (const a of result.response.artifacts) lines.push('', ...artifactLines(a));
  lines.push('');
  if (result.toolCalls.length) {
    lines.push(`Tool calls (${result.toolCalls.length}):`);
    for (const c of result.toolCalls) lines.push(toolCallLine(c));
  }
  const u = result.usage;
  lines.push(
    `Stop reason: ${result.stopReason} · steps ${result.steps} · model ${result.model}` +
      (result.formatMode ? ` · formatter ${result.formatMode}` : ''),
  );
  lines.push(
    `Tokens: ${u.inputTokens} in, ${u.outputTokens} out, ${u.cacheReadInputTokens} cache read, ` +
      `${u.cacheCreationInputTokens} cache write · cost $${result.costUsd.toFixed(4)}`,
  );
  if (result.unavailableServers.length) {
    lines.push(`Unavailable servers: ${result.unavailableServers.map((s) => `${s.server} (${s.reason})`).join(', ')}`);
  }
  if (uiLink) lines.push(`Temporal UI: ${uiLink}`);
  return lines.join('\n');
}
