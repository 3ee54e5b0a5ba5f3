/**
 * The server tool blocks of a scripted answer, completed as the API makes them: each
 * `server_tool_use` gets its `srvtoolu_` id (which signs the block and the result sent with it) and
 * caller, each result the `tool_use_id` of the call it answers, each web search result its
 * `encrypted_content`, each web search citation its `encrypted_index`. Also what the response says of
 * them: `usage.server_tool_use` and the code execution `container`.
 */
import { createHash } from 'node:crypto';
import { ScenarioError } from './scenario';
import { CONTAINER_RESULTS, CONTAINER_TOOLS, RESULT_ANSWERS, isServerResult } from './server-tools';
import { citationIndex, serverToolId, webSearchResultContent } from './signatures';

type Block = { type: string; [k: string]: unknown };
type Message = { role: string; content: string | Block[] };

const DIRECT = { type: 'direct' };
/** Result blocks the API sends with the `caller` of their call. */
const WITH_CALLER = new Set(['web_search_tool_result', 'web_fetch_tool_result']);
const CONTAINER_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

const contentBlocks = (m: Message): Block[] => (typeof m.content === 'string' ? [] : m.content);

/** The request's `server_tool_use` blocks that no result block answers yet, oldest first. */
function unansweredCalls(messages: readonly Message[]): Block[] {
  const assistant = messages.filter((m) => m.role === 'assistant').flatMap(contentBlocks);
  const answered = new Set(assistant.filter((b) => isServerResult(b.type)).map((b) => String(b.tool_use_id)));
  return assistant.filter((b) => b.type === 'server_tool_use' && !answered.has(String(b.id)));
}

/** A text block as the API sends it: its web search citations signed, or `citations: null`. */
export function textBlock(text: string, citations: ReadonlyArray<Record<string, unknown>> | undefined): Block {
  if (!citations?.length) return { type: 'text', text, citations: null };
  return {
    type: 'text',
    text,
    citations: citations.map((c) => ({
      type: c.type,
      cited_text: c.cited_text,
      url: c.url,
      title: c.title,
      encrypted_index: citationIndex(text, c as never),
    })),
  };
}

/** A result block's content as the API sends it: a web search's results get their `encrypted_content`. */
function resultContent(b: Block): unknown {
  if (b.type !== 'web_search_tool_result' || !Array.isArray(b.content)) return b.content;
  return (b.content as Block[]).map((r) => {
    const entry = { url: r.url, title: r.title, page_age: r.page_age ?? null };
    return { type: 'web_search_result', ...entry, encrypted_content: webSearchResultContent(entry) };
  });
}

/**
 * Completes the server blocks of `content` (a step's blocks, templates expanded; the others are
 * returned as they are). A result without `tool_use_id` answers the first `server_tool_use` before it
 * in the step that it fits and that has no result yet, else the first such call of the request (one
 * answered after a client tool round). `seed(i)` makes the id of the call at index i.
 */
export function completeServerBlocks(content: Block[], messages: readonly Message[], seed: (index: number) => string, where: string): Block[] {
  const out = content.map((b) => ({ ...b }));
  const open: number[] = [];
  const history = unansweredCalls(messages);
  /** Index of a call → index of the result sent with it. */
  const resultOf = new Map<number, number>();
  /** Index of a result → the call it answers, when that call is in the step. */
  const callOf = new Map<number, number>();
  for (const [i, b] of out.entries()) {
    if (b.type === 'server_tool_use') {
      out[i] = { type: 'server_tool_use', id: b.id, name: b.name, input: b.input, caller: b.caller ?? DIRECT };
      open.push(i);
      continue;
    }
    if (!isServerResult(b.type)) continue;
    const fits = (call: Block): boolean => RESULT_ANSWERS[b.type]!.includes(call.name as never);
    const given = b.tool_use_id as string | undefined;
    const local = open.find((k) => (given !== undefined ? out[k]!.id === given : fits(out[k]!)));
    let call: Block | undefined;
    if (local !== undefined) {
      open.splice(open.indexOf(local), 1);
      resultOf.set(local, i);
      callOf.set(i, local);
      call = out[local];
    } else {
      const earlier = given !== undefined ? history.find((c) => c.id === given) : history.find(fits);
      if (given === undefined && !earlier) {
        throw new ScenarioError(`${where}, content.${i}: a \`${b.type}\` block with no \`server_tool_use\` to answer (in the step or the request); give its \`tool_use_id\``);
      }
      if (earlier) history.splice(history.indexOf(earlier), 1);
      call = earlier;
    }
    out[i] = {
      type: b.type,
      tool_use_id: given ?? call?.id,
      content: resultContent(b),
      ...(WITH_CALLER.has(b.type) ? { caller: call?.caller ?? DIRECT } : {}),
    };
  }
  for (const [i, b] of out.entries()) {
    if (b.type !== 'server_tool_use' || b.id !== undefined) continue;
    const r = resultOf.get(i);
    b.id = serverToolId.make(seed(i), b, r === undefined ? undefined : out[r]);
  }
  for (const [r, k] of callOf) out[r]!.tool_use_id = out[k]!.id;
  return out;
}

/** `usage.server_tool_use`: the web searches and fetches the content calls; null without server tool blocks. */
export function serverToolUsage(content: readonly Block[]): { web_search_requests: number; web_fetch_requests: number } | null {
  if (!content.some((b) => b.type === 'server_tool_use' || isServerResult(b.type))) return null;
  const count = (name: string): number => content.filter((b) => b.type === 'server_tool_use' && b.name === name).length;
  return { web_search_requests: count('web_search'), web_fetch_requests: count('web_fetch') };
}

/** Whether the content ran code in a container (then the response names it in `container`). */
export const usesContainer = (content: readonly Block[]): boolean =>
  content.some((b) => (b.type === 'server_tool_use' && CONTAINER_TOOLS.includes(String(b.name))) || CONTAINER_RESULTS.includes(b.type));

/**
 * The response's `container`: the one the request names (`container`, an id or `{ id }`), else
 * `container_` and a hash of `seed`; it expires 30 days after `since`.
 */
export function containerOf(body: Record<string, unknown>, seed: string, since: number): { id: string; expires_at: string; skills: null } {
  const asked = typeof body.container === 'string' ? body.container : (body.container as { id?: unknown } | null | undefined)?.id;
  const id = typeof asked === 'string' && asked ? asked : `container_${createHash('sha1').update(seed).digest('hex').slice(0, 24)}`;
  return { id, expires_at: new Date(since + CONTAINER_LIFETIME_MS).toISOString(), skills: null };
}
