/**
 * Cancelling a turn, a conversation or a batch from code, by one name: a workflow id, or a batch's
 * name (its workflow, or its shards when the batch was split). Cancel is Temporal's cancellation:
 * a turn ends `cancelled` with its Claude or tool call cancelled; a conversation and a batch cancel
 * their running turns and end `cancelled` too. The cancel waits, bounded, until each workflow has
 * closed, since only a worker can carry a cancellation out; one no worker can run now (none polls its
 * task queue, or its workflow task fails) is not waited for and says why. `terminate` ends them at
 * once instead, without their cleanup. Names are looked up with describe, never visibility, so a
 * workflow started a moment ago is found.
 */
import { WorkflowNotFoundError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { batchShardWorkflowId, batchWorkflowId, MAX_BATCH_SHARDS } from '../core/batch';
import { runStatusOf, type RunStatus } from './run-status';
import { kindOfWorkflowType, type WorkflowKind } from './workflow-kind';
import { runHealth, type RunHealth } from './run-health';
import { NotFoundError } from './not-found';

/** How long {@link cancelByName} waits for the workflows to close by default. */
export const DEFAULT_CANCEL_WAIT_MS = 30_000;

/** What became of one workflow named by a cancel. */
export interface CancelOutcome {
  id: string;
  type: WorkflowKind;
  /**
   * `cancelled`: it ran and ended cancelled; `already-ended`: it had closed before the cancel, which
   * left it alone; `ended-otherwise`: it closed another way after the request (it finished first);
   * `still-running`: it had not closed when the wait ran out (no worker carried the cancel out);
   * `blocked`: no worker can run it now (`health` says why), so the cancel, recorded, waits for one
   * and is not waited for; `terminated`: ended at once with `terminate`, no worker needed.
   */
  outcome: 'cancelled' | 'already-ended' | 'ended-otherwise' | 'still-running' | 'blocked' | 'terminated';
  /** Why no worker can run it (`blocked`), from what Temporal records. */
  health?: RunHealth;
  status: RunStatus | string;
  /** Start to close; to now for one still running. */
  ranForMs: number;
  /** The conversation or batch whose cancel reached this turn. */
  parent?: string;
  /** The task queue it runs on: where a worker must be for it to end. */
  taskQueue: string;
}

/** Nothing by that name: neither a workflow id nor a batch name. */
export class NothingToCancelError extends NotFoundError {
  override name = 'NothingToCancelError';
}

/** A workflow by that id that is not mcp-turns' (another type of workflow). */
export class NotMcpTurnsWorkflowError extends Error {
  override name = 'NotMcpTurnsWorkflowError';
}

async function describeIfAny(client: Client, id: string): Promise<WorkflowExecutionDescription | undefined> {
  try {
    return await client.workflow.getHandle(id).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/**
 * The workflows `name` stands for: the workflow with that id, else the batch of that name (its one
 * workflow, or the shards of every split it was run with).
 */
export async function findByName(client: Client, name: string): Promise<WorkflowExecutionDescription[]> {
  const exact = await describeIfAny(client, name);
  if (exact) return [exact];
  const firstShards = Array.from({ length: MAX_BATCH_SHARDS - 1 }, (_, i) => i + 2);
  const [single, ...firsts] = await Promise.all([
    describeIfAny(client, batchWorkflowId(name)),
    ...firstShards.map((shards) => describeIfAny(client, batchShardWorkflowId(name, 1, shards))),
  ]);
  const rest = await Promise.all(
    firstShards.flatMap((shards, i) =>
      firsts[i]
        ? Array.from({ length: shards - 1 }, (_, s) =>
            describeIfAny(client, batchShardWorkflowId(name, s + 2, shards)),
          )
        : [],
    ),
  );
  return [single, ...firsts, ...rest].filter((d): d is WorkflowExecutionDescription => d !== undefined);
}

/** Resolves once the workflow `id` has closed (its latest run), or after `ms`, whichever is first. */
async function closedWithin(client: Client, id: string, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    client.workflow
      .getHandle(id)
      .result()
      .catch(() => undefined), // cancelled, failed or gone: closed either way
    new Promise<void>((resolve) => (timer = setTimeout(resolve, ms))),
  ]);
  clearTimeout(timer);
}

function outcomeOf(d: WorkflowExecutionDescription, wasRunning: boolean, parent?: string, health?: RunHealth): CancelOutcome {
  const status = runStatusOf(d.status.name);
  const outcome: CancelOutcome['outcome'] = !wasRunning
    ? 'already-ended'
    : status === 'running'
      ? health
        ? 'blocked'
        : 'still-running'
      : status === 'cancelled'
        ? 'cancelled'
        : status === 'terminated'
          ? 'terminated'
          : 'ended-otherwise';
  return {
    id: d.workflowId,
    type: kindOfWorkflowType(d.type)!,
    outcome,
    status,
    ranForMs: (d.closeTime?.getTime() ?? Date.now()) - d.startTime.getTime(),
    ...(parent !== undefined ? { parent } : {}),
    taskQueue: d.taskQueue,
    ...(outcome === 'blocked' && health ? { health } : {}),
  };
}

/** The health of a running workflow that no worker can run now; undefined when one can. */
async function blockedHealth(client: Client, d: WorkflowExecutionDescription): Promise<RunHealth | undefined> {
  const health = await runHealth(client, d);
  return health.noWorker || health.failingTask ? health : undefined;
}

/**
 * Cancels what `name` stands for (see {@link findByName}) and waits up to `waitMs` for it to close.
 * Answers one outcome per workflow: each named one, then after each conversation or batch the turns
 * it ran when it was cancelled. A workflow that has already closed is left as it is. Throws
 * {@link NothingToCancelError} when the name stands for nothing, {@link NotMcpTurnsWorkflowError}
 * for another kind of workflow.
 */
export async function cancelByName(
  client: Client,
  name: string,
  { waitMs = DEFAULT_CANCEL_WAIT_MS, terminate = false }: { waitMs?: number; terminate?: boolean } = {},
): Promise<CancelOutcome[]> {
  const found = await findByName(client, name);
  if (!found.length)
    throw new NothingToCancelError(
      `no turn, conversation or batch named ${name} in namespace ${client.options.namespace}`,
    );
  const foreign = found.find((d) => kindOfWorkflowType(d.type) === undefined);
  if (foreign)
    throw new NotMcpTurnsWorkflowError(
      `${name} is a ${foreign.type} workflow, not a turn, a conversation or a batch`,
    );

  const running = found.filter((d) => d.status.name === 'RUNNING');
  // The turns each one runs now, as its cancel will reach them (a conversation's, a batch's).
  const children = running.flatMap((d) =>
    (d.raw.pendingChildren ?? [])
      .filter((c) => c.workflowId && kindOfWorkflowType(c.workflowTypeName ?? '') === 'turn')
      .map((c) => ({ id: c.workflowId!, parent: d.workflowId })),
  );
  // Terminate ends a run at once; a cancel is carried out by a worker, and waited for only where one can.
  const blocked = new Map<string, RunHealth>();
  await Promise.all(
    running.map(async (d) => {
      const handle = client.workflow.getHandle(d.workflowId);
      try {
        if (terminate) await handle.terminate('terminated by mcp-turns cancel --terminate');
        else {
          await handle.cancel();
          const health = await blockedHealth(client, d);
          if (health) blocked.set(d.workflowId, health);
        }
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err; // closed since it was described
      }
    }),
  );
  const cancelled = [...running.map((d) => d.workflowId), ...children.map((c) => c.id)];
  await Promise.all(cancelled.filter((id) => !blocked.has(id)).map((id) => closedWithin(client, id, terminate ? 5_000 : waitMs)));

  const ended = new Map(
    await Promise.all(cancelled.map(async (id) => [id, await describeIfAny(client, id)] as const)),
  );
  const outcomes: CancelOutcome[] = [];
  for (const d of found) {
    const wasRunning = d.status.name === 'RUNNING';
    outcomes.push(outcomeOf((wasRunning && ended.get(d.workflowId)) || d, wasRunning, undefined, blocked.get(d.workflowId)));
    for (const child of children.filter((c) => c.parent === d.workflowId)) {
      const described = ended.get(child.id);
      if (described) outcomes.push(outcomeOf(described, true, d.workflowId));
    }
  }
  return outcomes;
}
