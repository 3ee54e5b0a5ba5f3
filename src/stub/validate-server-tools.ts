/**
 * The checks the Messages API makes on server tools (tools it runs itself: web search, web fetch,
 * code execution, tool search): their `tools` definitions, deferred tools, and the server tool blocks
 * of a transcript, which must come back exactly as the API sent them. Each check returns the 400
 * message naming the field, or undefined.
 */
import { citationIndex, serverToolId, webSearchResultContent } from './signatures';
import { RESULT_ANSWERS, SERVER_TOOL_NAMES, TOOL_TYPES, definesServerTool, isServerResult, isToolSearchTool } from './server-tools';

type Block = { type: string; [k: string]: unknown };
type Message = { role: string; content: string | Block[] };
type Tool = Record<string, unknown>;

const SERVER_TOOL_ID = /^srvtoolu_[a-zA-Z0-9_]+$/;
const SEND_BACK = 'send server tool blocks back exactly as the API returned them';

const blocks = (m: Message): Block[] => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content);
const quoted = (values: readonly string[]): string => values.map((v) => `'${v}'`).join(', ');

/** Why the API refuses the definition of a tool that is not `custom` (tools[index]), or undefined. */
export function toolDefinitionProblem(t: Tool, index: number): string | undefined {
  const type = String(t.type);
  const known = TOOL_TYPES[type];
  if (!known) {
    return `tools.${index}: Input tag '${type}' found using 'type' does not match any of the expected tags: ${quoted(['custom', ...Object.keys(TOOL_TYPES)])}`;
  }
  const at = `tools.${index}.${type}`;
  if (known.name !== undefined && t.name !== known.name) return `${at}.name: Input should be '${known.name}'`;
  if (known.fields) {
    const extra = Object.keys(t).find((k) => k !== 'type' && k !== 'name' && !known.fields!.includes(k));
    if (extra) return `${at}.${extra}: Extra inputs are not permitted`;
  }
  for (const key of ['allowed_domains', 'blocked_domains']) {
    if (Array.isArray(t[key]) && (t[key] as unknown[]).length === 0) {
      return `${at}.${key}: Empty list of domains is ambiguous. Provide at least one domain or null.`;
    }
  }
  if (t.allowed_domains != null && t.blocked_domains != null) {
    return `${at}: Cannot specify both allowed_domains and blocked_domains in the same request`;
  }
  if (t.max_uses != null && !(Number.isInteger(t.max_uses) && (t.max_uses as number) > 0)) {
    return `${at}.max_uses: Input should be an integer greater than 0`;
  }
  return undefined;
}

/**
 * Deferred tools (`defer_loading: true`) need a tool search tool to find them, and at least one tool
 * must not be deferred.
 */
export function deferredToolsProblem(tools: readonly Tool[]): string | undefined {
  const deferred = tools.findIndex((t) => t.defer_loading === true);
  if (deferred === -1) return undefined;
  if (!tools.some(isToolSearchTool)) {
    const t = tools[deferred]!;
    return (
      `tools.${deferred}.${String(t.type ?? 'custom')}.defer_loading: Tools with defer_loading=true require a tool search tool ` +
      '(`tool_search_tool_regex_20251119` or `tool_search_tool_bm25_20251119`) in `tools`'
    );
  }
  if (tools.every((t) => t.defer_loading === true)) return 'tools: At least one tool must have defer_loading=false. All tools cannot be deferred.';
  return undefined;
}

/** The names `tools` defines (custom tools and the fixed names of the others). */
const toolNames = (tools: readonly Tool[]): Set<string> =>
  new Set(tools.map((t) => (typeof t.name === 'string' ? t.name : undefined)).filter((n): n is string => n !== undefined));

/** The `tool_reference` blocks in `list` that name no tool of `tools`, with their index. */
function unknownReference(list: unknown, names: Set<string>): { index: number; name: string } | undefined {
  if (!Array.isArray(list)) return undefined;
  for (const [index, r] of (list as Block[]).entries()) {
    if (r?.type === 'tool_reference' && !names.has(String(r.tool_name))) return { index, name: String(r.tool_name) };
  }
  return undefined;
}

interface Placed {
  block: Block;
  message: number;
  index: number;
}

/**
 * The transcript's server tool blocks, as the API checks them: citations only in assistant text,
 * `tool_use`/`tool_result` only with tools, no `tool_result` for a server tool, every
 * `server_tool_use` of a defined server tool, every result after its `server_tool_use`, every
 * `tool_reference` naming a tool, and every server block, citation and result sent back exactly as
 * the stub made it (its signatures: a web search result's `encrypted_content`, a citation's
 * `encrypted_index`, and the `srvtoolu_` id, which signs its block and the result sent with it).
 */
export function serverBlocksProblem(messages: readonly Message[], tools: readonly Tool[]): string | undefined {
  const names = toolNames(tools);
  /** Every server_tool_use so far, by id. */
  const uses = new Map<string, Placed>();
  /** The first result of each server_tool_use id. */
  const results = new Map<string, Placed>();
  for (const [i, m] of messages.entries()) {
    for (const [j, b] of blocks(m).entries()) {
      const at = `messages.${i}.content.${j}`;
      if (!b || typeof b !== 'object') continue;
      if ((b.type === 'tool_use' || b.type === 'tool_result') && tools.length === 0) {
        return `${at}: Requests which include \`tool_use\` or \`tool_result\` blocks must define tools.`;
      }
      if (m.role === 'user') {
        if (b.type === 'text' && Array.isArray(b.citations) && b.citations.length > 0) {
          return `${at}.citations: text blocks in \`user\` messages may not carry citations; only the assistant's text does`;
        }
        if (b.type === 'tool_result') {
          const id = String(b.tool_use_id);
          if (uses.has(id) || id.startsWith('srvtoolu_')) {
            return `${at}: \`tool_result\` block for ${id}, a \`server_tool_use\` block: the API runs server tools itself and takes no \`tool_result\` for them`;
          }
          const ref = unknownReference(b.content, names);
          if (ref) return `${at}.content.${ref.index}: Tool reference '${ref.name}' not found in available tools`;
        }
        continue;
      }
      if (b.type === 'server_tool_use') {
        const id = String(b.id);
        if (!SERVER_TOOL_ID.test(id)) return `${at}.id: String should match pattern '^srvtoolu_[a-zA-Z0-9_]+$'`;
        const name = String(b.name);
        if (!(SERVER_TOOL_NAMES as readonly string[]).includes(name)) return `${at}.name: Input should be ${quoted(SERVER_TOOL_NAMES)}`;
        if (!definesServerTool(tools, name)) return `${at}: \`server_tool_use\` block calls \`${name}\`, a server tool not defined in \`tools\``;
        if (serverToolId.isSigned(id) && !serverToolId.verifyUse(b)) {
          return `${at}: \`server_tool_use\` block ${id} was changed (its \`name\`, \`input\` or \`caller\`): ${SEND_BACK}`;
        }
        uses.set(id, { block: b, message: i, index: j });
      } else if (isServerResult(b.type)) {
        const id = String(b.tool_use_id);
        const use = uses.get(id);
        if (!use) return `${at}: \`${b.type}\` block for ${id} has no \`server_tool_use\` block with that id before it`;
        if (!RESULT_ANSWERS[b.type]!.includes(use.block.name as never)) {
          return `${at}: \`${b.type}\` block answers ${id}, a \`${String(use.block.name)}\` call`;
        }
        if (!results.has(id)) results.set(id, { block: b, message: i, index: j });
        if (b.type === 'web_search_tool_result' && Array.isArray(b.content)) {
          for (const [k, r] of (b.content as Block[]).entries()) {
            if (r?.type === 'web_search_result' && r.encrypted_content !== webSearchResultContent(r as never)) {
              return `${at}.content.${k}.encrypted_content: Invalid \`encrypted_content\` in \`web_search_result\` block`;
            }
          }
        }
        if (b.type === 'tool_search_tool_result') {
          const ref = unknownReference((b.content as { tool_references?: unknown } | undefined)?.tool_references, names);
          if (ref) return `${at}.content.tool_references.${ref.index}: Tool reference '${ref.name}' not found in available tools`;
        }
      } else if (b.type === 'text' && Array.isArray(b.citations)) {
        for (const [k, c] of (b.citations as Block[]).entries()) {
          if (c?.type === 'web_search_result_location' && c.encrypted_index !== citationIndex(b.text, c as never)) {
            return `${at}.citations.${k}.encrypted_index: Invalid \`encrypted_index\` in \`web_search_result_location\` citation (the citation or its text block was changed)`;
          }
        }
      }
    }
  }
  for (const [id, use] of uses) {
    const result = results.get(id);
    const check = serverToolId.checkResult(id, result?.block);
    if (check === 'changed') {
      return `messages.${result!.message}.content.${result!.index}: \`${result!.block.type}\` block for ${id} was changed: ${SEND_BACK}`;
    }
    if (check === 'missing') {
      return `messages.${use.message}.content.${use.index}: the result block sent with \`server_tool_use\` ${id} is missing: ${SEND_BACK}`;
    }
  }
  return undefined;
}
