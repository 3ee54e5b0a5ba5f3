/**
 * Claude's server tools: tools the Messages API runs itself (web search, web fetch, code execution),
 * offered beside a turn's own. A turn's `serverTools` is decided once at its start from three layers,
 * each over the one before it, tool by tool: the worker's `claude.serverTools`, the turn's toolset's,
 * the turn's own (`false` turns one off). Each becomes the API's definition of its version.
 *
 * Default versions work on every model that has the tool: `web_search_20250305`,
 * `web_fetch_20250910` and `code_execution_20250825`. The newer web tools (`web_search_20260318`,
 * `web_fetch_20260318`) filter results by running code and need a newer model: name them with
 * `version`. Their replies then carry code execution blocks and a `container` too.
 */
import type {
  CodeExecutionTool20250825,
  CodeExecutionTool20260120,
  CodeExecutionTool20260521,
  ToolSearchToolBm25_20251119,
  ToolSearchToolRegex20251119,
  WebFetchTool20250910,
  WebFetchTool20260209,
  WebFetchTool20260309,
  WebFetchTool20260318,
  WebSearchTool20250305,
  WebSearchTool20260209,
  WebSearchTool20260318,
} from '@anthropic-ai/sdk/resources/messages';

/** The API's definition of one of the server tools a turn can offer. */
export type ServerToolDefinition =
  | WebSearchTool20250305
  | WebSearchTool20260209
  | WebSearchTool20260318
  | WebFetchTool20250910
  | WebFetchTool20260209
  | WebFetchTool20260309
  | WebFetchTool20260318
  | CodeExecutionTool20250825
  | CodeExecutionTool20260120
  | CodeExecutionTool20260521
  | ToolSearchToolRegex20251119
  | ToolSearchToolBm25_20251119;

/**
 * How a turn with more tools than it loads up front (`maxToolsPerRequest`) offers the rest: sent
 * deferred with a tool search tool Claude finds them with (`regex`: Claude writes a pattern over
 * names and descriptions; `bm25`: a query in words; `auto`: regex), or dropped (`off`).
 */
export type ToolSearchMode = 'auto' | 'regex' | 'bm25' | 'off';

/** The tool search tool of `mode` (not `off`). */
export function toolSearchToolDefinition(mode: Exclude<ToolSearchMode, 'off'>): ToolSearchToolRegex20251119 | ToolSearchToolBm25_20251119 {
  return mode === 'bm25'
    ? { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' }
    : { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' };
}

/** A user's approximate location, for more relevant search results (web search only). */
export interface UserLocation {
  type: 'approximate';
  city?: string;
  region?: string;
  country?: string;
  timezone?: string;
}

export interface WebSearchOptions {
  version?: 'web_search_20250305' | 'web_search_20260209' | 'web_search_20260318';
  /** Searches per Claude request. */
  maxUses?: number;
  /** Only these domains (excludes `blockedDomains`). */
  allowedDomains?: string[];
  /** Never these domains (excludes `allowedDomains`). */
  blockedDomains?: string[];
  userLocation?: UserLocation;
}

export interface WebFetchOptions {
  version?: 'web_fetch_20250910' | 'web_fetch_20260209' | 'web_fetch_20260309' | 'web_fetch_20260318';
  /** Fetches per Claude request. */
  maxUses?: number;
  allowedDomains?: string[];
  blockedDomains?: string[];
  /** Tokens of a fetched page kept in the context. */
  maxContentTokens?: number;
  /** Fetched documents may be cited. @default false */
  citations?: boolean;
}

export interface CodeExecutionOptions {
  version?: 'code_execution_20250825' | 'code_execution_20260120' | 'code_execution_20260521';
}

/** Which server tools a turn offers: `true` with the defaults, options, or `false` (off). */
export interface ServerToolsInput {
  web_search?: boolean | WebSearchOptions;
  web_fetch?: boolean | WebFetchOptions;
  code_execution?: boolean | CodeExecutionOptions;
}

export type ServerToolKey = keyof ServerToolsInput;

export const SERVER_TOOL_KEYS: readonly ServerToolKey[] = ['web_search', 'web_fetch', 'code_execution'];

/** The version each tool is offered in unless one is named (see the file comment). */
export const DEFAULT_SERVER_TOOL_VERSIONS = {
  web_search: 'web_search_20250305',
  web_fetch: 'web_fetch_20250910',
  code_execution: 'code_execution_20250825',
} as const;

/** The layers over each other, tool by tool (see the file comment). */
export function mergeServerTools(...layers: Array<ServerToolsInput | undefined>): ServerToolsInput {
  const merged: ServerToolsInput = {};
  for (const layer of layers) {
    for (const key of SERVER_TOOL_KEYS) {
      const value = layer?.[key];
      if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
    }
  }
  return merged;
}

const options = <T extends object>(value: boolean | T | undefined): T | undefined => (value === undefined || value === false ? undefined : value === true ? ({} as T) : value);

/** The API's definitions of the tools `tools` turns on, in a stable order. */
export function serverToolDefinitions(tools: ServerToolsInput): ServerToolDefinition[] {
  const defs: ServerToolDefinition[] = [];
  const search = options(tools.web_search);
  if (search) {
    defs.push({
      type: search.version ?? DEFAULT_SERVER_TOOL_VERSIONS.web_search,
      name: 'web_search',
      ...(search.maxUses !== undefined ? { max_uses: search.maxUses } : {}),
      ...(search.allowedDomains ? { allowed_domains: search.allowedDomains } : {}),
      ...(search.blockedDomains ? { blocked_domains: search.blockedDomains } : {}),
      ...(search.userLocation ? { user_location: search.userLocation } : {}),
    } as ServerToolDefinition);
  }
  const fetch = options(tools.web_fetch);
  if (fetch) {
    defs.push({
      type: fetch.version ?? DEFAULT_SERVER_TOOL_VERSIONS.web_fetch,
      name: 'web_fetch',
      ...(fetch.maxUses !== undefined ? { max_uses: fetch.maxUses } : {}),
      ...(fetch.allowedDomains ? { allowed_domains: fetch.allowedDomains } : {}),
      ...(fetch.blockedDomains ? { blocked_domains: fetch.blockedDomains } : {}),
      ...(fetch.maxContentTokens !== undefined ? { max_content_tokens: fetch.maxContentTokens } : {}),
      ...(fetch.citations !== undefined ? { citations: { enabled: fetch.citations } } : {}),
    } as ServerToolDefinition);
  }
  const code = options(tools.code_execution);
  if (code) defs.push({ type: code.version ?? DEFAULT_SERVER_TOOL_VERSIONS.code_execution, name: 'code_execution' } as ServerToolDefinition);
  return defs;
}

/** Names a reply's `server_tool_use` blocks give each server tool's calls. */
const TOOL_OF_CALL: Readonly<Record<string, ServerToolKey>> = {
  web_search: 'web_search',
  web_fetch: 'web_fetch',
  code_execution: 'code_execution',
  bash_code_execution: 'code_execution',
  text_editor_code_execution: 'code_execution',
};

/** The server tool a reply's `server_tool_use` block named `name` is a call of, if any. */
export function serverToolOfCall(name: string | undefined): ServerToolKey | undefined {
  return name !== undefined && Object.hasOwn(TOOL_OF_CALL, name) ? TOOL_OF_CALL[name] : undefined;
}

/** The server tools whose calls `messages` hold (a conversation's earlier turns), each once. */
export function serverToolsCalledIn(messages: ReadonlyArray<{ role: string; content: unknown }>): ServerToolKey[] {
  const found = new Set<ServerToolKey>();
  for (const m of messages) {
    if (m.role !== 'assistant' || !Array.isArray(m.content)) continue;
    for (const b of m.content as Array<{ type?: string; name?: string }>) {
      const key = b.type === 'server_tool_use' ? serverToolOfCall(b.name) : undefined;
      if (key) found.add(key);
    }
  }
  return SERVER_TOOL_KEYS.filter((k) => found.has(k));
}

/**
 * The definitions a turn must send besides its own for the server tools its prior history called
 * (the API refuses a request whose history names a server tool it does not define): each with its
 * defaults, for each one `offered` leaves out.
 */
export function historyServerTools(messages: ReadonlyArray<{ role: string; content: unknown }>, offered: ReadonlyArray<{ name: string }>): ServerToolDefinition[] {
  const missing = serverToolsCalledIn(messages).filter((k) => !offered.some((t) => t.name === k));
  return serverToolDefinitions(Object.fromEntries(missing.map((k) => [k, true])));
}

/** A tool definition of the API's own tools (it has a `type` other than `custom`), not a turn's. */
export function isServerToolDefinition(tool: { type?: string | null }): tool is ServerToolDefinition {
  return tool.type !== undefined && tool.type !== null && tool.type !== 'custom';
}
