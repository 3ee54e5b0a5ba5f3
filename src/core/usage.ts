import { serverToolOfCall } from './server-tools';

/**
 * Token usage of one Claude call or a whole turn, summed exactly (retried attempts excluded), and
 * the uses of Claude's server tools it paid for (absent: none).
 */
export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  /** Every token written to the prompt cache, whatever its TTL. */
  cacheCreationInputTokens: number;
  /**
   * The share of `cacheCreationInputTokens` written with a 1 hour TTL
   * (`usage.cache_creation.ephemeral_1h_input_tokens`), priced above the 5 minute writes; the rest
   * are 5 minute writes. Absent: none.
   */
  cacheCreation1hInputTokens?: number;
  /** Web searches the API ran (`usage.server_tool_use.web_search_requests`): billed per search. */
  webSearchRequests?: number;
  /** Pages the API fetched (`usage.server_tool_use.web_fetch_requests`): tokens only. */
  webFetchRequests?: number;
  /**
   * Code execution calls the API ran, counted from the reply's content: the API bills them by
   * container time, which usage does not report, so no cost includes them.
   */
  codeExecutions?: number;
}

/** The optional counts of {@link TokenUsage}: the 1 hour cache writes and the server tool counts. */
const OPTIONAL_COUNTS = ['cacheCreation1hInputTokens', 'webSearchRequests', 'webFetchRequests', 'codeExecutions'] as const;

export const ZERO_USAGE: TokenUsage = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
});

/** The sum of two usages; an optional count (1 hour cache writes, server tools) is present only when the sum is not 0. */
export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum: TokenUsage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadInputTokens: a.cacheReadInputTokens + b.cacheReadInputTokens,
    cacheCreationInputTokens: a.cacheCreationInputTokens + b.cacheCreationInputTokens,
  };
  for (const k of OPTIONAL_COUNTS) {
    const n = (a[k] ?? 0) + (b[k] ?? 0);
    if (n) sum[k] = n;
  }
  return sum;
}

/**
 * Converts the API's snake_case usage (nullable cache fields; `cache_creation`, the cache writes by
 * TTL, absent from older replies) to ours; `content`, the reply's, counts its code execution calls
 * (usage has no count of them). The 1 hour writes are at most the cache writes in all.
 */
export function fromApiUsage(
  u: {
    input_tokens: number;
    output_tokens: number;
    cache_read_input_tokens?: number | null;
    cache_creation_input_tokens?: number | null;
    cache_creation?: { ephemeral_1h_input_tokens?: number | null; ephemeral_5m_input_tokens?: number | null } | null;
    server_tool_use?: { web_search_requests?: number | null; web_fetch_requests?: number | null } | null;
  },
  content: ReadonlyArray<{ type: string; name?: string }> = [],
): TokenUsage {
  const usage: TokenUsage = {
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    cacheReadInputTokens: u.cache_read_input_tokens ?? 0,
    cacheCreationInputTokens: u.cache_creation_input_tokens ?? 0,
  };
  const oneHourWrites = Math.min(u.cache_creation?.ephemeral_1h_input_tokens ?? 0, usage.cacheCreationInputTokens);
  if (oneHourWrites) usage.cacheCreation1hInputTokens = oneHourWrites;
  const searches = u.server_tool_use?.web_search_requests ?? 0;
  const fetches = u.server_tool_use?.web_fetch_requests ?? 0;
  const executions = content.filter((b) => b.type === 'server_tool_use' && serverToolOfCall(b.name) === 'code_execution').length;
  if (searches) usage.webSearchRequests = searches;
  if (fetches) usage.webFetchRequests = fetches;
  if (executions) usage.codeExecutions = executions;
  return usage;
}

/** Every input token a call read: uncached, read from the cache, and written to it. */
export function inputTokensOf(u: TokenUsage): number {
  return u.inputTokens + u.cacheReadInputTokens + u.cacheCreationInputTokens;
}

/** Every token of a call or a turn, input (cached or not) and output: what a turn's `maxTokens` budgets. */
export function totalTokens(u: TokenUsage): number {
  return inputTokensOf(u) + u.outputTokens;
}

/**
 * The cache writes as a usage line shows them: `1200 cache write`, with the 1 hour share when there
 * is one: `1200 cache write (1h 800)`.
 */
export function cacheWriteText(u: TokenUsage): string {
  const oneHour = u.cacheCreation1hInputTokens ? ` (1h ${u.cacheCreation1hInputTokens})` : '';
  return `${u.cacheCreationInputTokens} cache write${oneHour}`;
}

/**
 * What a cost shown beside `usage` includes of the server tools, or '' when they were not used:
 * the web searches (billed per search, included), and code execution, billed by container time,
 * which usage does not report, so never included. E.g. ` (2 web searches included; code execution
 * container time not included)`.
 */
export function serverToolCostNote(u: TokenUsage): string {
  const notes: string[] = [];
  if (u.webSearchRequests) notes.push(`${u.webSearchRequests} web search${u.webSearchRequests === 1 ? '' : 'es'} included`);
  if (u.webFetchRequests) notes.push(`${u.webFetchRequests} web fetch${u.webFetchRequests === 1 ? '' : 'es'} (tokens only)`);
  if (u.codeExecutions) notes.push('code execution container time not included');
  return notes.length ? ` (${notes.join('; ')})` : '';
}
