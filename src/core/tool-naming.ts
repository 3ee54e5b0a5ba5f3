/**
 * MCP tools (and tools written in code, by their module's name) become Claude tools named `server__tool`. Claude wants `^[a-zA-Z0-9_-]{1,64}$`; MCP
 * allows 128 characters and dots, so names are sanitised and, when anything had to change, given a
 * hash suffix of the original name: two different MCP tools never collapse into one Claude name.
 */
import type { DroppedTool, McpToolDescriptor, Tool, ToolCatalog, ToolTarget, UnusableTool } from './contracts';
import { shortHash } from './hash';
import { matchesToolPattern, serverToolName } from './tool-patterns';

export const CLAUDE_TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX = 64;

export function claudeToolName(server: string, tool: string): string {
  const raw = serverToolName(server, tool);
  if (CLAUDE_TOOL_NAME.test(raw)) return raw;
  const suffix = `_${shortHash(raw)}`;
  const sanitized = raw.replace(/[^a-zA-Z0-9_-]/g, '_');
  return sanitized.slice(0, MAX - suffix.length) + suffix;
}

export interface ToolFilter {
  /** Only these (by `server__tool` or the bare tool name; `*` matches any run of characters: `server__*`). */
  allow?: string[];
  /** Never these (same forms). */
  deny?: string[];
  /** Where the lists come from, as a reason names them. @default "tools" (the turn's) */
  label?: string;
}

/** Why the allow/deny lists leave a tool out (the first that does), or undefined when they all let it in. */
function filteredOut(filters: readonly ToolFilter[], server: string, tool: string, name: string): string | undefined {
  const hit = (p: string): boolean => matchesToolPattern(p, server, tool, name);
  for (const filter of filters) {
    const label = filter.label ?? 'tools';
    if (filter.allow && !filter.allow.some(hit)) return `not in ${label}.allow`;
    if (filter.deny?.some(hit)) return `in ${label}.deny`;
  }
  return undefined;
}

/** What happens to the tools over `maxTools`. */
export interface OverflowPolicy {
  /** Sent with `defer_loading: true`, for a tool search to find (true), or dropped (false). */
  defer: boolean;
  /** Patterns of tools loaded before the others (as allow/deny's): they come first among the `maxTools`. */
  alwaysLoad?: readonly string[];
}

/**
 * Turns listed tools into Claude tool definitions: allow/deny first (every filter must let a tool
 * in); then the first `maxTools` (those `alwaysLoad` names first, then in list order) are loaded,
 * and the rest deferred (`defer_loading`, listed in `deferred`) or, without `defer`, dropped. Every
 * tool left out is reported in `dropped`; tools the listing found unusable (`unusable`) are reported
 * there too, after the descriptors, with the listing's reason unless allow/deny leaves them out
 * anyway.
 */
export function buildToolCatalog(
  descriptors: McpToolDescriptor[],
  filter: ToolFilter | readonly ToolFilter[],
  maxTools: number,
  unusable: UnusableTool[] = [],
  overflow: OverflowPolicy = { defer: false },
): ToolCatalog {
  const filters = Array.isArray(filter) ? filter : [filter as ToolFilter];
  const offered: Array<{ tool: Tool; target: ToolTarget }> = [];
  const targets: Record<string, ToolTarget> = {};
  const dropped: DroppedTool[] = [];
  for (const d of descriptors) {
    let name = claudeToolName(d.server, d.name);
    if (targets[name]) name = claudeToolName(d.server, `${d.name}#${offered.length}`);
    const filtered = filteredOut(filters, d.server, d.name, name);
    if (filtered) {
      dropped.push({ name, reason: filtered });
      continue;
    }
    const description = d.description ?? d.title;
    const target = { server: d.server, tool: d.name };
    offered.push({ tool: { name, ...(description !== undefined ? { description } : {}), input_schema: d.inputSchema as Tool['input_schema'] }, target });
    targets[name] = target;
  }
  const first = ({ tool, target }: (typeof offered)[number]): boolean =>
    (overflow.alwaysLoad ?? []).some((p) => matchesToolPattern(p, target.server, target.tool, tool.name));
  const ordered = [...offered.filter(first), ...offered.filter((o) => !first(o))];
  const loaded = ordered.slice(0, maxTools);
  const over = ordered.slice(maxTools);
  const tools: Tool[] = loaded.map((o) => o.tool);
  const deferred: string[] = [];
  for (const { tool } of over) {
    if (overflow.defer) {
      tools.push({ ...tool, defer_loading: true });
      deferred.push(tool.name);
    } else {
      dropped.push({ name: tool.name, reason: `over maxToolsPerRequest (${maxTools})` });
      delete targets[tool.name];
    }
  }
  for (const u of unusable) {
    const name = claudeToolName(u.server, u.name);
    dropped.push({ name, reason: filteredOut(filters, u.server, u.name, name) ?? u.reason });
  }
  return { tools, targets, dropped, ...(deferred.length ? { deferred } : {}) };
}
