/**
 * The turn's toolset, decided once at its start from the input and the worker's tool listing: the
 * tools Claude is offered under their Claude names (the toolset's and the turn's allow/deny lists
 * and `maxToolsPerRequest` applied) and Claude's own server tools, what each name calls, the tools left out and why, and the
 * approval each offered tool's calls wait for. `prepareTurn` records it; the workflow and the turn's
 * stream read it from there.
 */
import { toolApprovals } from './approvals';
import type { PreparedTurn, ServerUnavailable, ToolListing, WorkerTurnDefaults } from './contracts';
import type { TurnTools } from './stream-events';
import { resolveTurn } from './resolve-turn';
import { buildToolCatalog } from './tool-naming';
import { mergeServerTools, serverToolDefinitions, toolSearchToolDefinition } from './server-tools';
import { selectTools, type ToolsetSelection } from './toolsets';
import { namedTool, offeredToolName } from './request-control-checks';
import type { ChatTurnInput } from '../schemas/turn-input';

/**
 * @param selection what the turn's toolset selects (src/core/toolsets.ts); default: the turn's own
 *   servers and allow/deny lists
 */
export function prepareTurnOf(
  input: ChatTurnInput,
  listing: ToolListing,
  workerDefaults: WorkerTurnDefaults,
  selection: ToolsetSelection = selectTools(input, undefined, undefined),
): PreparedTurn {
  const resolved = resolveTurn(input, workerDefaults);
  const search = input.toolSearch ?? workerDefaults.toolSearch ?? 'auto';
  const forced = namedTool(resolved.toolChoice);
  // A forced tool is loaded up front: a deferred one is not there to be called until a search finds it.
  const alwaysLoad = [...(forced !== undefined ? [forced] : []), ...(workerDefaults.alwaysLoad ?? []), ...(input.alwaysLoad ?? [])];
  const built = buildToolCatalog(listing.tools, selection.filters, resolved.maxToolsPerRequest, listing.unusableTools, { defer: search !== 'off', alwaysLoad });
  const serverTools = [
    ...serverToolDefinitions(mergeServerTools(workerDefaults.serverTools, selection.serverTools, input.serverTools)),
    // The deferred tools are found with it (src/core/server-tools.ts).
    ...(built.deferred?.length && search !== 'off' ? [toolSearchToolDefinition(search)] : []),
  ];
  const catalog = serverTools.length ? { ...built, tools: [...built.tools, ...serverTools] } : built;
  const forcedTool = forced !== undefined ? offeredToolName(catalog, forced) : undefined;
  return {
    catalog,
    approvals: toolApprovals(listing.tools, catalog.targets, resolved.approval),
    policies: listing.policies,
    unavailable: [...listing.unavailable, ...selection.outside.map((server) => ({ server, reason: `not in toolset ${input.toolset}` }))],
    unknownServers: listing.unknownServers,
    workerDefaults,
    ...(forcedTool !== undefined ? { forcedTool } : {}),
  };
}

/** The servers a turn goes without, and why: those its start could not use, then those the worker does not know. */
export function unavailableServers(prepared: Pick<PreparedTurn, 'unavailable' | 'unknownServers'>): ServerUnavailable[] {
  return [
    ...prepared.unavailable,
    ...prepared.unknownServers.map((server) => ({ server, reason: 'not configured on the worker' })),
  ];
}

/**
 * What the turn offers Claude and goes without (its `data-tools` event): each tool sent, with the
 * server and tool it calls (none: one of Claude's own server tools), the deferred ones, the dropped
 * ones and the servers unavailable.
 */
export function turnToolsOf(prepared: Pick<PreparedTurn, 'catalog' | 'unavailable' | 'unknownServers'>): TurnTools {
  const { catalog } = prepared;
  return {
    offered: catalog.tools.filter(({ name }) => !catalog.deferred?.includes(name)).map(({ name }) => {
      const target = catalog.targets[name];
      return target ? { name, server: target.server, tool: target.tool } : { name, providerExecuted: true };
    }),
    deferred: [...(catalog.deferred ?? [])],
    dropped: [...catalog.dropped],
    unavailable: unavailableServers(prepared),
  };
}
