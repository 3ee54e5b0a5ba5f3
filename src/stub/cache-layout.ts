/**
 * A request as the prompt cache sees it: its cacheable pieces in prefix order (each tool, each system
 * block, each block of each message) and its `cache_control` breakpoints, each ending the prefix of
 * the pieces up to and including the one it marks (a marker in a `tool_result`'s content ends the
 * prefix at its `tool_result`). A top-level `cache_control` (automatic caching) is one breakpoint
 * more, at the end of the request. A null `cache_control` is no breakpoint. The cache keys on
 * content, not on markers: pieces and prefixes are read without their `cache_control`.
 */
import { isRecord } from '../core/is-record';

type Block = { type: string; [k: string]: unknown };
type Message = { role: string; content: string | Block[] };

export interface CacheBreakpoint {
  /** The marker's field, as a 400 names it: `tools.0.cache_control`, `messages.2.content.1.cache_control`, `cache_control`. */
  path: string;
  /** The `cache_control` value as sent. */
  control: unknown;
  /** Number of pieces in the prefix it ends. */
  end: number;
}

export interface CacheLayout {
  /** What the cache keys on, piece by piece: the piece without markers, and for a message block its message and role. */
  pieceKeys: unknown[];
  /** In the API's order: tools, system, messages, then the top-level one. */
  breakpoints: CacheBreakpoint[];
  /**
   * The request cut after `n` pieces, as `{ tools, system, messages }` without markers (a part the
   * request does not have is null; a message cut inside keeps the blocks before the cut): what a
   * prefix's tokens are counted from.
   */
  prefix(n: number): { tools: unknown; system: unknown; messages: unknown[] };
}

/** A string is the same content as one text block (a client sends the last message as blocks to carry a marker). */
const asBlocks = (content: unknown): unknown => (typeof content === 'string' ? [{ type: 'text', text: content }] : content);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function unmarked(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null, (key, v: unknown) => (key === 'cache_control' ? undefined : v)));
}

/** The markers of one piece: its own `cache_control`, then those of the blocks in its `content` (a `tool_result`'s). */
function markersOf(piece: unknown, path: string): Array<{ path: string; control: unknown }> {
  if (!isRecord(piece)) return [];
  const out: Array<{ path: string; control: unknown }> = [];
  if (piece.cache_control != null) out.push({ path: `${path}.cache_control`, control: piece.cache_control });
  for (const [k, inner] of list(piece.content).entries()) {
    if (isRecord(inner) && inner.cache_control != null) out.push({ path: `${path}.content.${k}.cache_control`, control: inner.cache_control });
  }
  return out;
}

export function cacheLayout(body: Record<string, unknown>): CacheLayout {
  const tools = unmarked(body.tools);
  const system = unmarked(asBlocks(body.system));
  const messages = list(body.messages).map((m) => ({ role: (m as Message)?.role, content: unmarked(asBlocks((m as Message)?.content)) }));

  const pieceKeys: unknown[] = [];
  const breakpoints: CacheBreakpoint[] = [];
  const add = (key: unknown, piece: unknown, path: string): void => {
    pieceKeys.push(key);
    for (const m of markersOf(piece, path)) breakpoints.push({ ...m, end: pieceKeys.length });
  };
  list(body.tools).forEach((t, i) => add({ tool: list(tools)[i] }, t, `tools.${i}`));
  list(asBlocks(body.system)).forEach((b, i) => add({ system: list(system)[i] }, b, `system.${i}`));
  list(body.messages).forEach((m, i) =>
    list(asBlocks((m as Message)?.content)).forEach((b, j) =>
      add({ message: i, role: messages[i]!.role, block: list(messages[i]!.content)[j] }, b, `messages.${i}.content.${j}`),
    ),
  );
  if (body.cache_control != null) breakpoints.push({ path: 'cache_control', control: body.cache_control, end: pieceKeys.length });

  const toolCount = list(tools).length;
  const systemCount = list(system).length;
  const cut = (value: unknown, count: number): unknown => (Array.isArray(value) ? value.slice(0, count) : value);
  function prefix(n: number): { tools: unknown; system: unknown; messages: unknown[] } {
    let left = Math.max(0, n - toolCount - systemCount);
    const kept: unknown[] = [];
    for (const m of messages) {
      if (left <= 0) break;
      const size = list(m.content).length;
      kept.push(size <= left ? m : { ...m, content: list(m.content).slice(0, left) });
      left -= size;
    }
    return { tools: cut(tools, Math.min(n, toolCount)), system: cut(system, Math.max(0, Math.min(n - toolCount, systemCount))), messages: kept };
  }
  return { pieceKeys, breakpoints, prefix };
}

/** A breakpoint's ttl: `1h`, or `5m` (the default). */
export const ttlOf = (b: CacheBreakpoint): string => ((b.control as { ttl?: unknown }).ttl === '1h' ? '1h' : '5m');
