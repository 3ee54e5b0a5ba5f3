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

/**
 * Turns listed tools into Claude tool definitions: allow/deny first (every filter must let a tool
 * in), then at most `maxTools` (in list order), with everything left out reported in `dropped`. Tools the listing
 * found unusable (`unusable`) are reported there too, after the descriptors, with the listing's
 * reason unless allow/deny leaves them out anyway.
 */
export function buildToolCatalog(
  descriptors: McpToolDescriptor[],
  filter: ToolFilter | readonly ToolFilter[],
  maxTools: number,
  unusable: UnusableTool[] = [],
): ToolCatalog {
  const filters = Array.isArray(filter) ? filter : [filter as ToolFilter];
  const tools: Tool[] = [];
  const targets: Record<string, ToolTarget> = {};
  const dropped: DroppedTool[] = [];
  for (const d of descriptors) {
    let name = claudeToolName(d.server, d.name);
    if (targets[name]) name = claudeToolName(d.server, `${d.name}#${tools.length}`);
    const filtered = filteredOut(filters, d.server, d.name, name);
    if (filtered) {
      dropped.push({ name, reason: filtered });
      continue;
    }
    if (tools.length >= maxTools) {
      dropped.push({ name, reason: `over maxToolsPerRequest (${maxTools})` });
      continue;
    }
    const description = d.description ?? d.title;
    tools.push({
      name,
      ...(description !== undefined ? { description } : {}),
      input_schema: d.inputSchema as Tool['input_schema'],
    });
    targets[name] = { server: d.server, tool: d.name };
  }
  for (const u of unusable) {
    const name = claudeToolName(u.server, u.name);
    dropped.push({ name, reason: filteredOut(filters, u.server, u.name, name) ?? u.reason });
  }
  return { tools, targets, dropped };
}
