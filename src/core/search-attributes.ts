/**
 * The dev server (SQLite) allows at most 3 Int and 3 Double attributes per namespace, so the list
 * stays within that.
 *
 * The search attributes mcp-turns sets on its workflows, kept in one place: `mcp-turns server`
 * registers exactly this list on the dev server, and docs/operations.md ("Pointing at a real
 * cluster") lists it for real clusters.
 */
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';
import { MAX_MODEL_LENGTH } from './input-limits';

export const SA_BATCH = defineSearchAttributeKey('McpTurnsBatch', SearchAttributeType.KEYWORD);
export const SA_STATUS = defineSearchAttributeKey('McpTurnsStatus', SearchAttributeType.KEYWORD);
export const SA_STOP_REASON = defineSearchAttributeKey('McpTurnsStopReason', SearchAttributeType.KEYWORD);
export const SA_MODEL = defineSearchAttributeKey('McpTurnsModel', SearchAttributeType.KEYWORD);
export const SA_TOOL_CALLS = defineSearchAttributeKey('McpTurnsToolCalls', SearchAttributeType.INT);
export const SA_INPUT_TOKENS = defineSearchAttributeKey('McpTurnsInputTokens', SearchAttributeType.INT);
export const SA_OUTPUT_TOKENS = defineSearchAttributeKey('McpTurnsOutputTokens', SearchAttributeType.INT);
export const SA_COST_USD = defineSearchAttributeKey('McpTurnsCostUsd', SearchAttributeType.DOUBLE);
/**
 * Whose a workflow is: the opaque key of the identity that started it through `serve`
 * (src/client/owner.ts), never the identity itself (search attributes are stored in plain text,
 * even with encryption on). A conversation's and a batch's turns carry their parent's. Absent on
 * what was started otherwise (the CLI, the client API): only admins see those.
 */
export const SA_OWNER = defineSearchAttributeKey('McpTurnsOwner', SearchAttributeType.KEYWORD);
/** The memo key of the owner's name as an admin reads it (the memo is encrypted with the payloads). */
export const OWNER_MEMO = 'owner';

export const SEARCH_ATTRIBUTES = [
  SA_BATCH,
  SA_STATUS,
  SA_STOP_REASON,
  SA_MODEL,
  SA_TOOL_CALLS,
  SA_INPUT_TOKENS,
  SA_OUTPUT_TOKENS,
  SA_COST_USD,
  SA_OWNER,
] as const;

/**
 * Whether `model` may be the `McpTurnsModel` attribute. A longer one (a caller that skipped the
 * schema) is left out: past the server's limit it would fail the workflow task that sets it, and
 * Temporal would end the workflow (a conversation with its whole history). The turn itself then
 * refuses the model with one line.
 */
export function modelFitsSearchAttribute(model: string | undefined): model is string {
  return model !== undefined && model.length > 0 && model.length <= MAX_MODEL_LENGTH;
}

/**
 * What a turn's starter sets (the client, or a conversation or batch for its children): status
 * `running`, the model when the input names one, the batch and the owner's key. The workflow
 * upserts only what is missing at its start.
 */
export function turnStartSearchAttributes({ model, batch, owner }: { model?: string; batch?: string; owner?: string }): SearchAttributePair[] {
  return [
    { key: SA_STATUS, value: 'running' },
    ...(modelFitsSearchAttribute(model) ? [{ key: SA_MODEL, value: model }] : []),
    ...(batch ? [{ key: SA_BATCH, value: batch }] : []),
    ...(owner ? [{ key: SA_OWNER, value: owner }] : []),
  ];
}

/** The start option by which a conversation's or a batch's turn names its parent's owner (`memo`), when it has one. */
export function inheritedOwnerMemo(memo: Record<string, unknown> | undefined): { memo?: Record<string, unknown> } {
  const label = memo?.[OWNER_MEMO];
  return typeof label === 'string' ? { memo: { [OWNER_MEMO]: label } } : {};
}

/** The start option by which a conversation's or a batch's turn keeps its parent's fairness key (its owner's), when it has one. */
export function inheritedFairness(priority: { fairnessKey?: string; fairnessWeight?: number } | undefined): { priority?: { fairnessKey: string; fairnessWeight?: number } } {
  return priority?.fairnessKey ? { priority: { fairnessKey: priority.fairnessKey, ...(priority.fairnessWeight !== undefined ? { fairnessWeight: priority.fairnessWeight } : {}) } } : {};
}

/** `temporal server start-dev --search-attribute` wants `Name=Type` with these type names. */
const CLI_TYPE_NAMES: Record<string, string> = {
  [SearchAttributeType.KEYWORD]: 'Keyword',
  [SearchAttributeType.TEXT]: 'Text',
  [SearchAttributeType.INT]: 'Int',
  [SearchAttributeType.DOUBLE]: 'Double',
  [SearchAttributeType.BOOL]: 'Bool',
  [SearchAttributeType.DATETIME]: 'Datetime',
  [SearchAttributeType.KEYWORD_LIST]: 'KeywordList',
};

export function searchAttributeCliArgs(): string[] {
  return SEARCH_ATTRIBUTES.flatMap((k) => ['--search-attribute', `${k.name}=${CLI_TYPE_NAMES[k.type]}`]);
}

/** `temporal operator search-attribute create` wants `--name Name --type Type` per attribute. */
export function searchAttributeCreateArgs(keys: readonly (typeof SEARCH_ATTRIBUTES)[number][] = SEARCH_ATTRIBUTES): string[] {
  return keys.flatMap((k) => ['--name', k.name, '--type', CLI_TYPE_NAMES[k.type]!]);
}
