/**
 * The state of one running turn: its settings, transcript, tool calls, phase, step and usage. The
 * progress query and the UI's current details are computed from it when asked.
 */
import { log, setCurrentDetails } from '@temporalio/workflow';
import type { ClaudeCallOutput, ListToolsOutput, ServerUnavailable } from '../src/core/contracts';
import { GATHER_SYSTEM_PROMPT, joinSystem, unavailableServersNote } from '../src/core/prompts';
import type { ToolApproval } from '../src/core/approvals';
import { buildToolCatalog, type DroppedTool, type ToolCatalog } from '../src/core/tool-naming';
import { DEFAULT_MODEL } from '../src/core/turn-defaults';
import type { ResolvedTurnInput } from '../src/schemas/turn-input';
import type { TurnProgress } from '../src/core/turn-result';
import { progressDetails, type TurnProgressState } from '../src/core/turn-progress';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../src/core/usage';
import type { ClaudeStepRequest } from './claude-step';
import type { Approvals } from './approvals';
import { ToolCalls } from './tool-round';
import { TurnTranscript } from './turn-transcript';
import { segment, type TranscriptSegment } from '../src/core/transcript-segment';

/** Progress before the turn's start has finished. */
export function startingProgress(maxSteps: number): TurnProgressState {
  return { phase: 'listing-tools', step: 0, maxSteps, toolCalls: [], running: new Set(), approvals: [], usage: ZERO_USAGE, costUsd: 0 };
}

/** The worker's approval requirement of each offered tool, by its Claude-side name. */
function workerApprovals(listed: ListToolsOutput, targets: ToolCatalog['targets']): Record<string, ToolApproval> {
  const out: Record<string, ToolApproval> = {};
  for (const [name, target] of Object.entries(targets)) {
    const approval = listed.tools.find((d) => d.server === target.server && d.name === target.tool)?.approval;
    if (approval) out[name] = approval;
  }
  return out;
}

export class Turn {
  /** What every Claude call of the loop is asked with, besides the transcript. */
  readonly request: ClaudeStepRequest;
  readonly transcript: TurnTranscript;
  readonly calls: ToolCalls;
  /** Servers whose tools this turn goes without, and why. */
  readonly unavailable: ServerUnavailable[];
  readonly droppedTools: DroppedTool[];
  readonly hadTools: boolean;
  phase: TurnProgress['phase'] = 'listing-tools';
  /** Claude calls of the loop so far. */
  step = 0;
  usage: TokenUsage = ZERO_USAGE;
  costUsd = 0;

  /** A turn from its input (defaults applied) and the worker's tool listing. */
  constructor(
    readonly input: ResolvedTurnInput,
    listed: ListToolsOutput,
    readonly approvals: Approvals,
    /** Prior conversation passed as segments (a conversation's turns); `input.history` comes first. */
    historySegments: TranscriptSegment[] = [],
  ) {
    const catalog = buildToolCatalog(listed.tools, input.tools ?? {}, input.maxToolsPerRequest, listed.unusableTools);
    if (catalog.dropped.length) log.info('tools not offered to Claude', { dropped: catalog.dropped });
    this.droppedTools = catalog.dropped;
    this.hadTools = catalog.tools.length > 0;
    this.unavailable = [
      ...listed.unavailable,
      ...listed.unknownServers.map((server) => ({ server, reason: 'not configured on the worker' })),
    ];
    this.transcript = new TurnTranscript([...(input.history ? [segment(input.history)] : []), ...historySegments], input.question);
    this.transcript.offerTools(catalog.tools);
    this.calls = new ToolCalls(catalog, listed.policies, input.maxToolCalls, approvals, workerApprovals(listed, catalog.targets), input.approval);
    const system = joinSystem(
      input.loopPolicy === 'gather-then-format' ? GATHER_SYSTEM_PROMPT : undefined,
      input.system,
      this.unavailable.length ? unavailableServersNote(this.unavailable) : undefined,
    );
    this.request = {
      model: input.model ?? listed.turnDefaults?.model ?? DEFAULT_MODEL,
      ...(system !== undefined ? { system } : {}),
      maxTokens: input.maxTokensPerCall,
      ...(input.thinking ? { thinking: { type: 'enabled', budget_tokens: input.thinking.budgetTokens } } : {}),
    };
  }

  /** Enters a phase; the UI's current details follow. */
  enter(phase: TurnProgress['phase']): void {
    this.phase = phase;
    setCurrentDetails(progressDetails(this.progress()));
  }

  /** Adds an answered Claude call (the loop's or the formatter's) to the turn's usage. */
  count(call: Pick<ClaudeCallOutput, 'usage' | 'costUsd'>): void {
    this.usage = addUsage(this.usage, call.usage);
    this.costUsd += call.costUsd ?? 0;
  }

  progress(): TurnProgressState {
    return {
      phase: this.phase,
      step: this.step,
      maxSteps: this.input.maxSteps,
      toolCalls: this.calls.records,
      running: this.calls.running,
      approvals: this.approvals.records,
      usage: this.usage,
      costUsd: this.costUsd,
    };
  }
}
