/**
 * Where a batch's turns wait for Anthropic's Message Batches: each collector (one per task queue and
 * model) is asked what it gathers and which Message Batches it waits for, and the answer is narrowed
 * to the requests of the batch's turns, counted by their parent (a batch shard workflow).
 */
import type { Client } from '@temporalio/client';
import type { CollectorStatus, MessageBatchRequestCounts } from '../core/message-batches';
import { messageBatchesQuery } from '../core/workflow-handlers';

/** Turns of a batch waiting in one Message Batch, or gathering for the next one of a collector. */
export interface MessageBatchWait {
  /** The Message Batch's id; undefined for requests still gathering for the next one. */
  batchId: string | undefined;
  /** The model of the collector. */
  model: string;
  /** Requests of the given parents' turns (one per waiting turn). */
  turns: number;
  /** Every request of the Message Batch (or gathering), whoever's. */
  requests: number;
  /** When the Message Batch was submitted, or since when the oldest gathering request waits (ms epoch). */
  submittedAt: number | undefined;
  /** The Message Batch's requests by state at the collector's last poll; absent before it and for those gathering. */
  counts?: MessageBatchRequestCounts;
}

function countOf(byParent: Record<string, number>, parents: readonly string[]): number {
  return parents.reduce((n, p) => n + (byParent[p] ?? 0), 0);
}

/** The waits of `parents`' turns in one collector's status: Message Batches oldest first, then those gathering. */
export function waitsOf(status: CollectorStatus, parents: readonly string[]): MessageBatchWait[] {
  const waits: MessageBatchWait[] = status.batches
    .map((b) => ({
      batchId: b.id,
      model: status.model,
      turns: countOf(b.byParent, parents),
      requests: b.requests,
      submittedAt: b.submittedAt,
      ...(b.counts ? { counts: b.counts } : {}),
    }))
    .filter((w) => w.turns > 0)
    .sort((a, b) => a.submittedAt - b.submittedAt);
  const gathering = countOf(status.pending.byParent, parents);
  if (gathering > 0) {
    waits.push({
      batchId: undefined,
      model: status.model,
      turns: gathering,
      requests: status.pending.requests,
      submittedAt: status.pending.since,
    });
  }
  return waits;
}

/**
 * The Message Batch waits of the turns whose parent workflow is one of `parents`, over the
 * `collectors` (workflow ids) they used. A collector that has ended or cannot be asked now is left
 * out: this never throws.
 */
export async function messageBatchWaits(
  client: Client,
  collectors: readonly string[],
  parents: readonly string[],
): Promise<MessageBatchWait[]> {
  const answers = await Promise.all(
    collectors.map((id) =>
      client.workflow
        .getHandle(id)
        .query(messageBatchesQuery)
        .then(
          (status) => waitsOf(status, parents),
          () => [],
        ),
    ),
  );
  return answers.flat();
}

/**
 * Seconds until the Message Batches holding the waits have answered every request, from their own
 * progress: one that answered `a` of its requests in the time `t` since it was submitted answers the
 * `processing` left at that pace, in `t × processing / a`. Answered is its requests less those
 * processing: the API counts `succeeded`, `errored`, `canceled` and `expired` only once the whole
 * Message Batch has ended, and `processing` as it goes. The batch waits for the slowest; one that
 * has answered all (its results being handed to the turns) waits for nothing. Undefined while that
 * cannot be told: requests still gathering for the next Message Batch, a Message Batch not polled
 * yet or that has answered none of its requests, or none still processing.
 */
export function messageBatchEtaSeconds(waits: readonly MessageBatchWait[], now = Date.now()): number | undefined {
  let slowest: number | undefined;
  for (const w of waits) {
    if (w.batchId === undefined || w.submittedAt === undefined || !w.counts) return undefined;
    const { processing } = w.counts;
    if (!processing) continue;
    const answered = w.requests - processing;
    if (answered <= 0) return undefined;
    slowest = Math.max(slowest ?? 0, (Math.max(0, now - w.submittedAt) / 1000) * (processing / answered));
  }
  return slowest;
}

const count = (n: number): string => n.toLocaleString('en-US');

/** "8 s", "12 min", "2 h 5 min": how long ago, to the second under a minute, else to the minute. */
export function ageOf(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/**
 * One wait as a line: `412 turns waiting for Claude batch msgbatch_01AbC (2,031 requests, submitted
 * 12 min ago)`, or for requests not yet sent `37 requests gathering for the next Claude batch (oldest
 * 8 s)`. The Message Batch's id is shown in full, to be looked up in Anthropic's console.
 */
export function messageBatchLine(w: MessageBatchWait, now = Date.now()): string {
  if (w.batchId === undefined) {
    const oldest = w.submittedAt !== undefined ? ` (oldest ${ageOf(now - w.submittedAt)})` : '';
    return `${count(w.turns)} ${w.turns === 1 ? 'request' : 'requests'} gathering for the next Claude batch${oldest}`;
  }
  const submitted = w.submittedAt !== undefined ? `, submitted ${ageOf(now - w.submittedAt)} ago` : '';
  return (
    `${count(w.turns)} ${w.turns === 1 ? 'turn' : 'turns'} waiting for Claude batch ${w.batchId} ` +
    `(${count(w.requests)} ${w.requests === 1 ? 'request' : 'requests'}${submitted})`
  );
}
