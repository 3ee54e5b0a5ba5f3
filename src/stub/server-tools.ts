/**
 * The server tools the Messages API runs itself (web search, web fetch, code execution, tool search),
 * as the stub knows them: their `tools` definitions, the names their `server_tool_use` blocks carry,
 * and which result block answers which.
 */

/** The names a `server_tool_use` block may carry. */
export const SERVER_TOOL_NAMES = [
  'web_search',
  'web_fetch',
  'code_execution',
  'bash_code_execution',
  'text_editor_code_execution',
  'tool_search_tool_regex',
  'tool_search_tool_bm25',
] as const;
export type ServerToolName = (typeof SERVER_TOOL_NAMES)[number];

/** Each server result block type, and the `server_tool_use` names it answers. */
export const RESULT_ANSWERS: Record<string, readonly ServerToolName[]> = {
  web_search_tool_result: ['web_search'],
  web_fetch_tool_result: ['web_fetch'],
  code_execution_tool_result: ['code_execution'],
  bash_code_execution_tool_result: ['bash_code_execution'],
  text_editor_code_execution_tool_result: ['text_editor_code_execution'],
  tool_search_tool_result: ['tool_search_tool_regex', 'tool_search_tool_bm25'],
};
export const isServerResult = (type: string): boolean => Object.hasOwn(RESULT_ANSWERS, type);

/** `server_tool_use` names that run in a code execution container (the response then names it in `container`). */
export const CONTAINER_TOOLS: readonly string[] = ['code_execution', 'bash_code_execution', 'text_editor_code_execution'];
export const CONTAINER_RESULTS: readonly string[] = ['code_execution_tool_result', 'bash_code_execution_tool_result', 'text_editor_code_execution_tool_result'];

type Kind = 'web_search' | 'web_fetch' | 'code_execution' | 'tool_search_tool_regex' | 'tool_search_tool_bm25' | 'client';

interface ToolType {
  kind: Kind;
  /** The name a definition of this type must have; undefined: it has none. */
  name?: string;
  /** The fields a definition may have besides `type` and `name`; undefined: not checked. */
  fields?: readonly string[];
}

const COMMON = ['allowed_callers', 'cache_control', 'defer_loading', 'strict'];
const SEARCH = [...COMMON, 'max_uses', 'allowed_domains', 'blocked_domains', 'user_location'];
const FETCH = [...COMMON, 'max_uses', 'allowed_domains', 'blocked_domains', 'citations', 'max_content_tokens', 'url_sources'];

/** Every tool `type` the API takes besides `custom`, as the Anthropic SDK 1.12 lists them. */
export const TOOL_TYPES: Record<string, ToolType> = {
  web_search_20250305: { kind: 'web_search', name: 'web_search', fields: SEARCH },
  web_search_20260209: { kind: 'web_search', name: 'web_search', fields: SEARCH },
  web_search_20260318: { kind: 'web_search', name: 'web_search', fields: [...SEARCH, 'response_inclusion'] },
  web_fetch_20250910: { kind: 'web_fetch', name: 'web_fetch', fields: FETCH },
  web_fetch_20260209: { kind: 'web_fetch', name: 'web_fetch', fields: FETCH },
  web_fetch_20260309: { kind: 'web_fetch', name: 'web_fetch', fields: [...FETCH, 'use_cache'] },
  web_fetch_20260318: { kind: 'web_fetch', name: 'web_fetch', fields: [...FETCH, 'use_cache', 'response_inclusion'] },
  code_execution_20250522: { kind: 'code_execution', name: 'code_execution', fields: COMMON },
  code_execution_20250825: { kind: 'code_execution', name: 'code_execution', fields: COMMON },
  code_execution_20260120: { kind: 'code_execution', name: 'code_execution', fields: COMMON },
  code_execution_20260521: { kind: 'code_execution', name: 'code_execution', fields: COMMON },
  tool_search_tool_regex_20251119: { kind: 'tool_search_tool_regex', name: 'tool_search_tool_regex', fields: COMMON },
  tool_search_tool_regex: { kind: 'tool_search_tool_regex', name: 'tool_search_tool_regex', fields: COMMON },
  tool_search_tool_bm25_20251119: { kind: 'tool_search_tool_bm25', name: 'tool_search_tool_bm25', fields: COMMON },
  tool_search_tool_bm25: { kind: 'tool_search_tool_bm25', name: 'tool_search_tool_bm25', fields: COMMON },
  bash_20250124: { kind: 'client', name: 'bash' },
  text_editor_20250124: { kind: 'client', name: 'str_replace_editor' },
  text_editor_20250429: { kind: 'client', name: 'str_replace_based_edit_tool' },
  text_editor_20250728: { kind: 'client', name: 'str_replace_based_edit_tool' },
  memory_20250818: { kind: 'client', name: 'memory' },
  computer_toolset_20260801: { kind: 'client' },
  browser_toolset_20260801: { kind: 'client' },
};

/** Web tool versions that filter their results by running code: their responses carry code execution blocks too. */
const CODE_FILTERING = new Set(['web_search_20260318', 'web_fetch_20260318']);

/**
 * Whether `tools` defines the server tool a `server_tool_use` block named `name` runs: its own tool,
 * or for the code execution names a code execution tool or a web tool that filters by running code.
 */
export function definesServerTool(tools: ReadonlyArray<Record<string, unknown>>, name: string): boolean {
  return tools.some((t) => {
    const type = String(t.type ?? 'custom');
    const kind = TOOL_TYPES[type]?.kind;
    if (kind === undefined || kind === 'client') return false;
    if (CONTAINER_TOOLS.includes(name)) return kind === 'code_execution' || CODE_FILTERING.has(type);
    return kind === name;
  });
}

/** The tool search tool kinds. */
export const isToolSearchTool = (t: Record<string, unknown>): boolean => {
  const kind = TOOL_TYPES[String(t.type ?? 'custom')]?.kind;
  return kind === 'tool_search_tool_regex' || kind === 'tool_search_tool_bm25';
};
