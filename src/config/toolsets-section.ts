/**
 * The config's `toolsets` section: named selections of the worker's tools (src/core/toolsets.ts),
 * `toolsets: { research: { servers: [search, crm], allow: [...], deny: [...] } }`. Each named server
 * must be one of the file's MCP servers or tool modules.
 */
import { z } from 'zod';
import type { Toolset } from '../core/toolsets';
import { issueProblems } from '../schemas/issue-problems';
import { ServerToolsSchema } from '../schemas/server-tools';

const Names = z.array(z.string().min(1).max(200)).max(200);

const ToolsetSchema = z
  .object({
    /** Servers and tool modules it uses. @default every one */
    servers: Names.optional(),
    /** Only these tools (`server__tool`, bare name, `server__*`). */
    allow: Names.optional(),
    /** Never these. */
    deny: Names.optional(),
    /** Claude's own tools the set offers (over the worker's `claude.serverTools`). */
    serverTools: ServerToolsSchema.optional(),
  })
  .strict();

const ToolsetsSchema = z.record(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'toolset names are 1-64 characters of A-Z a-z 0-9 _ -'), ToolsetSchema);

/** The section checked against the names of the file's servers and modules: the tool sets, or one line per problem. */
export function parseToolsets(section: unknown, known: readonly string[]): { toolsets?: Record<string, Toolset>; problems: string[] } {
  if (section === undefined || section === null) return { toolsets: {}, problems: [] };
  const parsed = ToolsetsSchema.safeParse(section);
  if (!parsed.success) return { problems: issueProblems(parsed.error.issues, ['toolsets']).map(({ at, message }) => `${at}: ${message}`) };
  const problems: string[] = [];
  for (const [name, set] of Object.entries(parsed.data)) {
    (set.servers ?? []).forEach((server, i) => {
      if (!known.includes(server)) problems.push(`toolsets.${name}.servers.${i}: ${server} is neither an MCP server nor a tool module of this file (${known.join(', ') || 'it has none'})`);
    });
  }
  return problems.length ? { problems } : { toolsets: parsed.data, problems };
}
