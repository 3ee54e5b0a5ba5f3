/**
 * The usage of an answer, prompt caching included, as the API counts it. Input = bytes/4 of
 * {system, messages, tools}; output = bytes/4 of the content; a prefix = bytes/4 of the request cut
 * there. The cache works by prefix, over the request's pieces in order (each tool, each system
 * block, each message block: cache-layout.ts):
 *
 * - a request reads the longest prefix already cached that ends at or before its last breakpoint
 *   (the API's 20-block lookback is not modelled);
 * - each breakpoint past what was read writes the prefix up to it: the span between the breakpoint
 *   before it (or the end of what was read) and it is written with the breakpoint's ttl, so
 *   `cache_creation` splits `cache_creation_input_tokens` by ttl (a span several breakpoints end
 *   takes the longest ttl);
 * - read and written tokens are not counted in `input_tokens`. Entries never expire.
 */
import { createHash } from 'node:crypto';
import { cacheLayout, ttlOf } from './cache-layout';
import { estimateInputTokens, tokens, type CacheCreation, type Usage } from './usage';

export interface CachedUsage {
  usage: Usage;
  cacheCreation: CacheCreation;
}

/** `cache_creation` of an answer that writes nothing, or whose usage is scripted (every written token counts as 5-minute). */
export const cacheCreationOf = (usage: Usage): CacheCreation => ({ ephemeral_5m_input_tokens: usage.cache_creation_input_tokens, ephemeral_1h_input_tokens: 0 });

/** The usage of answering `body` with `content`; the prefixes its breakpoints end are cached in `cache`. */
export function usageWithCache(body: Record<string, unknown>, content: unknown, cache: Set<string>): CachedUsage {
  const total = estimateInputTokens(body);
  const { pieceKeys, breakpoints, prefix } = cacheLayout(body);
  // keys[n]: the prefix of the first n pieces.
  const keys = [createHash('sha1').update('').digest('hex')];
  for (const k of pieceKeys) keys.push(createHash('sha1').update(`${keys[keys.length - 1]}|${JSON.stringify(k)}`).digest('hex'));
  const size = (n: number): number => (n === 0 ? 0 : tokens(prefix(n)));
  const output = tokens(content);
  if (!breakpoints.length) {
    const usage = { input_tokens: total, output_tokens: output, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    return { usage, cacheCreation: cacheCreationOf(usage) };
  }
  /** Each prefix end, with the longest ttl of the breakpoints ending there. */
  const ends = new Map<number, string>();
  for (const b of breakpoints) ends.set(b.end, ends.get(b.end) === '1h' ? '1h' : ttlOf(b));
  const last = Math.max(...ends.keys());
  let readEnd = 0;
  for (let n = last; n > 0; n--) {
    if (cache.has(keys[n]!)) {
      readEnd = n;
      break;
    }
  }
  const created = { '5m': 0, '1h': 0 };
  let from = readEnd;
  for (const end of [...ends.keys()].sort((a, b) => a - b)) {
    if (end <= from) continue;
    created[ends.get(end) as '5m' | '1h'] += size(end) - size(from);
    from = end;
  }
  for (const end of ends.keys()) cache.add(keys[end]!);
  const read = size(readEnd);
  const written = created['5m'] + created['1h'];
  return {
    usage: {
      input_tokens: Math.max(1, total - read - written),
      output_tokens: output,
      cache_read_input_tokens: read,
      cache_creation_input_tokens: written,
    },
    cacheCreation: { ephemeral_5m_input_tokens: created['5m'], ephemeral_1h_input_tokens: created['1h'] },
  };
}
