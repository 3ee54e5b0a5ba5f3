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
 * One query (a parsed line) under `defaults` as an item, or what is wrong with it; `fallbackId` is
 * its id when it names none, and `seen` the ids taken so far (a duplicate would share a workflow id).
 */
function batchItemOf(json: unknown, defaults: TurnOptions, fallbackId: string, seen: Set<string>): { item: BatchItem } | { message: string } {
  const merged = withBatchDefaults(json, defaults);
  const parsed = BatchLineSchema.safeParse(merged);
  if (!parsed.success) return { message: parsed.error.issues.map((iss) => `${iss.path.join('.') || '(line)'}: ${iss.message}`).join('; ') };
  const { id, ...rest } = merged as { id?: string } & ChatTurnInput;
  const itemId = id ?? fallbackId;
  if (seen.has(itemId)) return { message: `duplicate id "${itemId}"` };
  seen.add(itemId);
  return { item: { id: itemId, input: rest } };
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
    const checked = batchItemOf(json, defaults, String(line), seen);
    if ('message' in checked) problems.push({ line, message: checked.message });
    else items.push(checked.item);
  });
  return { items, problems };
}

/**
 * The queries of a batch given as a list (`serve`'s body) under `defaults`, by the rule of a file's
 * lines: a query without an id is numbered from 1 as a line would be. Each bad query is a problem
 * naming its place (`queries[3].question: ...`).
 */
export function parseBatchQueries(queries: readonly unknown[], defaults: TurnOptions = {}): { items: BatchItem[]; problems: string[] } {
  const items: BatchItem[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  queries.forEach((query, i) => {
    const checked = batchItemOf(query, defaults, String(i + 1), seen);
    if ('message' in checked) problems.push(`queries[${i}]: ${checked.message}`);
    else items.push(checked.item);
  });
  return { items, problems };
}
