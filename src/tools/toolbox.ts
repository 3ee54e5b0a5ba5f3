/**
 * Every tool a worker can run: its MCP servers' (src/mcp/pool.ts) and its tool modules'
 * (code-tools.ts), under one name space: a name is one server or one module. A turn's listing asks
 * both and merges their answers; a call goes to whichever has the name.
 */
import type { CallToolInput, CallToolOutput, ListToolsInput, ToolListing, UnusableTool } from '../core/contracts';
import { unknownServerFailure } from '../mcp/errors';
import type { CallOptions, ListOptions, McpPool } from '../mcp/pool';
import type { CodeTools } from './code-tools';

/** Per-call options: the MCP pool's, and the turn's id (a code tool's `ctx.turnId`). */
export interface ToolCallOptions extends CallOptions {
  turnId: string;
}

/** See the file comment. */
export class Toolbox {
  constructor(
    readonly pool: McpPool,
    readonly code?: CodeTools,
  ) {
    const both = pool.serverNames.filter((n) => code?.has(n));
    if (both.length) throw new Error(`${both.join(', ')}: named both as an MCP server and as a tool module (one name is one of them)`);
  }

  /** Every server's and module's name. */
  get names(): string[] {
    return [...this.pool.serverNames, ...(this.code?.names ?? [])];
  }

  /** The tools of the asked servers and modules (all by default); see McpPool.listTools. */
  async listTools(input: ListToolsInput = {}, opts: ListOptions = {}): Promise<ToolListing> {
    const code = this.code;
    if (!code) return this.pool.listTools(input, opts);
    const names = input.servers ?? this.names;
    const modules = [...new Set(names.filter((n) => code.has(n)))];
    const servers = names.filter((n) => !code.has(n));
    const [mcp, listed] = await Promise.all([
      servers.length || !input.servers ? this.pool.listTools({ ...input, servers }, opts) : undefined,
      Promise.all(modules.map((m) => code.list(m))),
    ]);
    const out: ToolListing & { unusableTools: UnusableTool[] } = {
      tools: [...(mcp?.tools ?? [])],
      policies: { ...mcp?.policies },
      unavailable: [...(mcp?.unavailable ?? [])],
      unknownServers: [...(mcp?.unknownServers ?? [])],
      unusableTools: [...(mcp?.unusableTools ?? [])],
    };
    modules.forEach((name, i) => {
      const r = listed[i];
      if (!r) return;
      if ('reason' in r) {
        out.unavailable.push(r);
        return;
      }
      out.tools.push(...r.tools);
      out.unusableTools.push(...r.unusable);
      out.policies[name] = r.policy;
    });
    return out;
  }

  /** One call, by the server or module that has the tool. */
  async callTool(input: CallToolInput, opts: ToolCallOptions): Promise<Omit<CallToolOutput, 'attempt'>> {
    if (this.code?.has(input.server)) return this.code.callTool(input, { turnId: opts.turnId, ...(opts.signal ? { signal: opts.signal } : {}) });
    if (!this.pool.serverNames.includes(input.server)) throw unknownServerFailure(input.server);
    return this.pool.callTool(input, opts);
  }

  /** Loads the tool modules (a worker does this at start, so a module that fails is said at once). */
  async load(): Promise<void> {
    await this.code?.load();
  }

  /** Closes the MCP servers. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
