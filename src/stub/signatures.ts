/**
 * Deterministic stand-ins for the API's opaque values (thinking signatures, redacted data, a web search
 * result's `encrypted_content`, a citation's `encrypted_index`) and the signature a server tool id
 * carries: the stub can tell whether a block it issued came back unchanged.
 */
import { createHash, createHmac } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json';

const KEY = 'mcp-turns-stub-model';

export function thinkingSignature(thinking: string): string {
  return createHmac('sha256', KEY).update(`thinking:${thinking}`).digest('base64');
}

export const redactedData = {
  make(seed: string): string {
    const body = Buffer.from(`redacted:${seed}`).toString('base64');
    return `${body}.${createHmac('sha256', KEY).update(body).digest('base64')}`;
  },
  verify(data: string): boolean {
    const [body, mac] = data.split('.');
    return !!body && mac === createHmac('sha256', KEY).update(body).digest('base64');
  },
};

const mac = (kind: string, value: unknown, encoding: 'hex' | 'base64'): string =>
  createHmac('sha256', KEY).update(`${kind}:${canonicalJson(value)}`).digest(encoding);

/** A web search result's `encrypted_content`: a signature of its url, title and page_age. */
export function webSearchResultContent(entry: { url: unknown; title: unknown; page_age: unknown }): string {
  return mac('web_search_result', { url: entry.url, title: entry.title, page_age: entry.page_age }, 'base64');
}

/** A `web_search_result_location` citation's `encrypted_index`: a signature of the cited text block's text and the citation. */
export function citationIndex(text: unknown, citation: { url: unknown; title: unknown; cited_text: unknown }): string {
  return mac('citation', { text, url: citation.url, title: citation.title, cited_text: citation.cited_text }, 'base64');
}

const DIRECT = { type: 'direct' };

/** What a `server_tool_use` block's id signs: its name, input and caller (`direct` when absent). */
const useValue = (nonce: string, use: Record<string, unknown>): unknown => ({
  nonce,
  name: use.name,
  input: use.input,
  caller: use.caller ?? DIRECT,
});

/** Result blocks the API sends with a `caller`. */
const RESULTS_WITH_CALLER = new Set(['web_search_tool_result', 'web_fetch_tool_result']);

/** What a server tool id signs of its result: the block without its `tool_use_id` and `cache_control`; nothing when none came with it. */
function resultValue(nonce: string, result: Record<string, unknown> | undefined): unknown {
  if (!result) return { nonce, result: null };
  const { tool_use_id: _id, cache_control: _marker, ...rest } = result;
  if (RESULTS_WITH_CALLER.has(String(rest.type))) rest.caller = rest.caller ?? DIRECT;
  return { nonce, result: rest };
}

/** A server tool id the stub makes: `srvtoolu_` then 24 hex digits (a nonce, a signature of the block, one of its result). */
const STUB_ID = /^srvtoolu_([0-9a-f]{8})([0-9a-f]{8})([0-9a-f]{8})$/;

export const serverToolId = {
  /**
   * The id of a `server_tool_use` block: `seed` makes it differ per block, and it signs the block and
   * the result block that comes with it in the same response (none when the result comes later).
   */
  make(seed: string, use: Record<string, unknown>, result: Record<string, unknown> | undefined): string {
    const nonce = createHash('sha1').update(seed).digest('hex').slice(0, 8);
    return `srvtoolu_${nonce}${mac('server_tool_use', useValue(nonce, use), 'hex').slice(0, 8)}${mac('server_tool_result', resultValue(nonce, result), 'hex').slice(0, 8)}`;
  },
  /** Whether `id` is one the stub makes (a scenario's fixed id is not, and signs nothing). */
  isSigned(id: string): boolean {
    return STUB_ID.test(id);
  },
  /** Whether a signed id's block has the name, input and caller it was made with. */
  verifyUse(use: Record<string, unknown>): boolean {
    const m = STUB_ID.exec(String(use.id));
    return !!m && mac('server_tool_use', useValue(m[1]!, use), 'hex').slice(0, 8) === m[2];
  },
  /**
   * How a signed id's result compares with what it was made with: `same` (the result that came with
   * it), `later` (it was made without a result, which came in a later response, or has not come yet),
   * `changed` or `missing`.
   */
  checkResult(id: string, result: Record<string, unknown> | undefined): 'same' | 'later' | 'changed' | 'missing' {
    const m = STUB_ID.exec(id);
    if (!m) return 'same';
    const signed = (r: Record<string, unknown> | undefined): string => mac('server_tool_result', resultValue(m[1]!, r), 'hex').slice(0, 8);
    if (result && signed(result) === m[3]) return 'same';
    if (signed(undefined) === m[3]) return 'later';
    return result ? 'changed' : 'missing';
  },
};
