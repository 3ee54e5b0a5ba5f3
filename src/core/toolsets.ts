/**
 * Tool sets: named selections of the worker's tools (`toolsets: { research: { servers, allow, deny } }`
 * in its config), which a turn or a conversation's message picks by name (`toolset: "research"`), for
 * the phases of a workflow that each need their own tools. A turn's own `servers` and `tools` narrow
 * its toolset further, never widen it.
 */
import type { ServerToolsInput } from './server-tools';
import type { ToolFilter } from './tool-naming';

/** One tool set of the worker's config. */
export interface Toolset {
  /** The servers and tool modules it uses; absent: every one. */
  servers?: string[];
  /** Only these tools (`server__tool`, bare name or `server__*`). */
  allow?: string[];
  /** Never these. */
  deny?: string[];
  /** Claude's own tools it offers (src/core/server-tools.ts). */
  serverTools?: ServerToolsInput;
}

/** What a turn uses when it names a toolset: the servers to list, those it named outside the set, and the filters. */
export interface ToolsetSelection {
  /** Servers to list; undefined = every one. */
  servers?: string[];
  /** Servers the turn named that the toolset leaves out. */
  outside: string[];
  /** The toolset's allow/deny lists, then the turn's. */
  filters: ToolFilter[];
  /** The toolset's server tools. */
  serverTools?: ServerToolsInput;
}

/** Why a turn cannot use the toolset it names: it is not defined on the worker. */
export function unknownToolsetProblem(name: string, defined: Readonly<Record<string, Toolset>>): string {
  const names = Object.keys(defined);
  return `toolset: "${name}" is not defined on the worker (${names.length ? `defined: ${names.join(', ')}` : 'its config defines no toolsets'})`;
}

/**
 * The selection of a turn naming `toolset` (undefined: none) with its own `servers` and `tools`
 * lists. Throws nothing: the caller checks that the toolset is defined.
 */
export function selectTools(
  turn: { servers?: string[]; tools?: { allow?: string[]; deny?: string[] } },
  name: string | undefined,
  toolset: Toolset | undefined,
): ToolsetSelection {
  const own: ToolFilter = { ...turn.tools };
  if (!toolset || name === undefined) return { ...(turn.servers ? { servers: turn.servers } : {}), outside: [], filters: [own] };
  const setFilter: ToolFilter = { ...(toolset.allow ? { allow: toolset.allow } : {}), ...(toolset.deny ? { deny: toolset.deny } : {}), label: `toolsets.${name}` };
  const inSet = (s: string): boolean => !toolset.servers || toolset.servers.includes(s);
  const servers = turn.servers ? turn.servers.filter(inSet) : toolset.servers;
  return {
    ...(servers ? { servers } : {}),
    outside: (turn.servers ?? []).filter((s) => !inSet(s)),
    filters: [setFilter, own],
    ...(toolset.serverTools ? { serverTools: toolset.serverTools } : {}),
  };
}
