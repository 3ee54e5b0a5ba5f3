/**
 * The turn's toolset, decided once at its start from the input and the worker's tool listing: the
 * tools Claude is offered under their Claude names (the turn's allow/deny lists and
 * `maxToolsPerRequest` applied), what each name calls, the tools left out and why, and the approval
 * each offered tool's calls wait for. `prepareTurn` records it; the workflow and the turn's stream
 * read it from there.
 */
import { toolApprovals } from './approvals';
import type { PreparedTurn, ToolListing, WorkerTurnDefaults } from './contracts';
import { resolveTurn } from './resolve-turn';
import { buildToolCatalog } from './tool-naming';
import type { ChatTurnInput } from '../schemas/turn-input';

export function prepareTurnOf(input: ChatTurnInput, listing: ToolListing, workerDefaults: WorkerTurnDefaults): PreparedTurn {
  const resolved = resolveTurn(input, workerDefaults);
  const catalog = buildToolCatalog(listing.tools, resolved.tools ?? {}, resolved.maxToolsPerRequest, listing.unusableTools);
  return {
    catalog,
    approvals: toolApprovals(listing.tools, catalog.targets, resolved.approval),
    policies: listing.policies,
    unavailable: listing.unavailable,
    unknownServers: listing.unknownServers,
    workerDefaults,
  };
}
