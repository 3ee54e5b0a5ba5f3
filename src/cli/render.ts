/** Human-readable rendering of turn results and progress for the terminal. */
import { oneLine } from '../core/text';
import type { Artifact } from '../core/response';
import type { ChatTurnResult, ToolCallRecord } from '../core/turn-result';
import type { DroppedTool } from '../core/contracts';
import type { OutputReport } from '../core/output-spec';
import { cacheWriteText, serverToolCostNote } from '../core/usage';

const OVER_LIMIT = /^over maxToolsPerRequest \((\d+)\)$/;

/**
 * The tools Claude was not offered, as one line, or undefined when none was left out by a limit
 * or as unusable (tools a turn's own allow/deny lists leave out are its choice, not news). Tools
 * over the per-request limit (with tool search off) come with the flags that offer them.
 */
export function droppedToolsLine(dropped: readonly DroppedTool[]): string | undefined {
  const overLimit = dropped.filter((d) => OVER_LIMIT.test(d.reason));
  // The turn's or its toolset's allow/deny lists: its choice.
  const unusable = dropped.filter((d) => !OVER_LIMIT.test(d.reason) && !/^(not )?in [\w.-]+\.(allow|deny)$/.test(d.reason));
  const parts: string[] = [];
  if (overLimit.length) {
    const limit = Number(OVER_LIMIT.exec(overLimit[0]!.reason)![1]);
    parts.push(
      `${overLimit.length} over the limit of ${limit} per request (${overLimit.map((d) => d.name).join(', ')}; ` +
        `--max-tools ${limit + overLimit.length} offers them, --tool-search auto lets Claude find them)`,
    );
  }
  if (unusable.length) parts.push(`${unusable.length} unusable (${unusable.map((d) => `${d.name}: ${d.reason}`).join('; ')})`);
  return parts.length ? `Tools not offered to Claude: ${parts.join('; ')}` : undefined;
}

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

/** A turn's output as printed (`run`, `chat`, `show`): its JSON, indented by 2 spaces. */
export function outputJson(output: unknown): string {
  return JSON.stringify(output, null, 2);
}

/**
 * How a turn's output was written, for the terminal: `Output: structured · 2 calls (repaired)`, and
 * with `invalid_output` each reason the answer does not match the schema.
 */
export function outputReportLines(report: OutputReport): string[] {
  const calls = `${report.calls} call${report.calls === 1 ? '' : 's'}${report.repaired ? ' (repaired)' : ''}`;
  return [`Output: ${report.path} · ${calls}`, ...(report.problems ?? []).map((p) => `  does not match the schema: ${p}`)];
}

/**
 * The result for the terminal; `answer: false` leaves out the answer (printed as it streamed). A
 * turn with an output (`output`) has it as its answer: its JSON, indented by 2 spaces.
 */
export function renderResult(result: ChatTurnResult, uiLink?: string, { answer = true }: { answer?: boolean } = {}): string {
  const lines: string[] = [];
  if (answer) lines.push(result.output !== undefined ? outputJson(result.output) : result.response.conversation.trim() || '(empty answer)');
  for (const a of result.response.artifacts) lines.push('', ...artifactLines(a));
  lines.push('');
  if (result.toolCalls.length) {
    lines.push(`Tool calls (${result.toolCalls.length}):`);
    for (const c of result.toolCalls) lines.push(toolCallLine(c));
  }
  const u = result.usage;
  const stoppedAt = result.stopReason === 'stop_sequence' && result.stopSequence !== undefined ? ` ${JSON.stringify(result.stopSequence)}` : '';
  lines.push(
    `Stop reason: ${result.stopReason}${stoppedAt} · steps ${result.steps} · model ${result.model}` +
      (result.formatMode ? ` · formatter ${result.formatMode}` : ''),
  );
  if (result.outputReport) lines.push(...outputReportLines(result.outputReport));
  lines.push(
    `Tokens: ${u.inputTokens} in, ${u.outputTokens} out, ${u.cacheReadInputTokens} cache read, ` +
      `${cacheWriteText(u)} · cost $${result.costUsd.toFixed(4)}${serverToolCostNote(u)}`,
  );
  if (result.unavailableServers.length) {
    lines.push(`Unavailable servers: ${result.unavailableServers.map((s) => `${s.server} (${s.reason})`).join(', ')}`);
  }
  const dropped = droppedToolsLine(result.droppedTools ?? []);
  if (dropped) lines.push(dropped);
  if (uiLink) lines.push(`Temporal UI: ${uiLink}`);
  return lines.join('\n');
}
