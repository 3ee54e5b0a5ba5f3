/**
 * The turn's toolset, decided once at its start from the input and the worker's tool listing: the
 * tools Claude is offered under their Claude names (the toolset's and the turn's allow/deny lists
 * and `maxToolsPerRequest` applied) and Claude's own server tools, what each name calls, the tools left out and why, and the
 * approval each offered tool's calls wait for. `prepareTurn` records it; the workflow and the turn's
 * stream read it from there.
 */
import { toolApprovals } from './approvals';
import type { PreparedTurn, ToolListing, WorkerTurnDefaults } from './contracts';
import { resolveTurn } from './resolve-turn';
import { buildToolCatalog } from './tool-naming';
import { mergeServerTools, serverToolDefinitions } from './server-tools';
import { selectTools, type ToolsetSelection } from './toolsets';
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
  const built = buildToolCatalog(listing.tools, selection.filters, resolved.maxToolsPerRequest, listing.unusableTools);
  const serverTools = serverToolDefinitions(mergeServerTools(workerDefaults.serverTools, selection.serverTools, input.serverTools));
  const catalog = serverTools.length ? { ...built, tools: [...built.tools, ...serverTools] } : built;
  return {
    catalog,
    approvals: toolApprovals(listing.tools, catalog.targets, resolved.approval),
    policies: listing.policies,
    unavailable: [...listing.unavailable, ...selection.outside.map((server) => ({ server, reason: `not in toolset ${input.toolset}` }))],
    unknownServers: listing.unknownServers,
    workerDefaults,
  };
}
