/**
 * Parsing a batch's JSONL input: one chat-turn input per line, bad lines reported by number. Options
 * given for the whole batch (the CLI's `--model`, `--toolset`, `--context`, `--server-tool`) are each
 * line's defaults: a field the line sets wins, but `context` and `serverTools` are merged key by key
 * (the line's value of a key wins).
 * A line is checked with its defaults applied.
 */
import { z } from 'zod';
import { ChatTurnInputSchema, type ChatTurnInput } from './turn-input';
import type { BatchItem } from '../core/batch';
import type { TurnOptions } from '../core/conversation';
import { isRecord } from '../core/is-record';

/** One input line: `{ "id"?: string, "question": string, ...per-query overrides }`. */
export const BatchLineSchema = ChatTurnInputSchema.extend({
  id: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,100}$/, 'id must be 1-100 characters of A-Z a-z 0-9 . _ -')
    .optional(),
});

/** `line` with the batch's `defaults` under it (see the file comment); a line that is not an object is left as it is. */
function withBatchDefaults(line: unknown, defaults: TurnOptions): unknown {
  if (!isRecord(line)) return line;
  const merged: Record<string, unknown> = { ...defaults, ...line };
  // A line's context that is not an object is left as it is, to be refused by name.
  if (defaults.context && (line.context === undefined || isRecord(line.context))) merged.context = { ...defaults.context, ...line.context };
  if (defaults.serverTools && (line.serverTools === undefined || isRecord(line.serverTools))) merged.serverTools = { ...defaults.serverTools, ...line.serverTools };
  return merged;
}

export interface BatchLineProblem {
  line: number;
  message: string;
}

/**
 * Parses JSONL text into items, each line under `defaults`; bad lines are reported with their line
 * number and left out, so the rest can run. Blank lines are ignored. Duplicate ids are errors (they
 * would share a workflow id).
 */
export function parseBatchLines(text: string, defaults: TurnOptions = {}): { items: BatchItem[]; problems: BatchLineProblem[] } {
  const items: BatchItem[] = [];
  const problems: BatchLineProblem[] = [];
  const seen = new Set<string>();
  text.split('\n').forEach((raw, i) => {
    const line = i + 1;
    if (!raw.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (err) {
      problems.push({ line, message: `not JSON: ${(err as Error).message}` });
      return;
    }
    json = withBatchDefaults(json, defaults);
    const parsed = BatchLineSchema.safeParse(json);
    if (!parsed.success) {
      problems.push({
        line,
        message: parsed.error.issues.map((iss) => `${iss.path.join('.') || '(line)'}: ${iss.message}`).join('; '),
      });
      return;
    }
    const { id, ...rest } = json as { id?: string } & ChatTurnInput;
    const itemId = id ?? String(line);
    if (seen.has(itemId)) {
      problems.push({ line, message: `duplicate id "${itemId}"` });
      return;
    }
    seen.add(itemId);
    items.push({ id: itemId, input: rest });
  });
  return { items, problems };
}
