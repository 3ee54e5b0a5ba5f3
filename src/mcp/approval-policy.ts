/**
 * A server's approval policy applied to one of its tools: the listing marks each tool that needs a
 * person's approval, so the policy travels with the tool list the turn records and replay never
 * reads the live config.
 */
import type { ToolApproval } from '../core/approvals';
import { matchesGlob } from '../core/tool-naming';
import type { ServerConfig } from './config-schema';

/** A tool name pattern on a tool's MCP name: `*` matches any run of characters, the rest literally. */
export function matchesToolNamePattern(pattern: string, tool: string): boolean {
  return matchesGlob(pattern, tool);
}

/**
 * The approval a call of `tool` needs under the server's policy, or undefined when it runs at
 * once: the tool matches a pattern of `always` and none of `never`.
 */
export function toolApproval(policy: ServerConfig['approval'], tool: string): ToolApproval | undefined {
  if (!policy.always.some((p) => matchesToolNamePattern(p, tool))) return undefined;
  if (policy.never.some((p) => matchesToolNamePattern(p, tool))) return undefined;
  return policy.timeoutMs !== undefined ? { timeoutMs: policy.timeoutMs } : {};
}
