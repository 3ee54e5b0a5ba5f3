/**
 * A server's approval policy applied to one of its tools: the listing marks each tool that needs a
 * person's approval, so the policy travels with the tool list the turn records and replay never
 * reads the live config.
 */
import type { ToolApproval } from '../core/contracts';
import { matchesGlob } from '../core/tool-patterns';
import type { ServerConfig } from './config-schema';

/**
 * The approval a call of `tool` needs under the server's policy, or undefined when it runs at
 * once: the tool's MCP name matches a pattern of `always` and none of `never` (`*` matches any run
 * of characters, the rest literally).
 */
export function toolApproval(policy: ServerConfig['approval'], tool: string): ToolApproval | undefined {
  if (!policy.always.some((p) => matchesGlob(p, tool))) return undefined;
  if (policy.never.some((p) => matchesGlob(p, tool))) return undefined;
  return policy.timeoutMs !== undefined ? { timeoutMs: policy.timeoutMs } : {};
}
