/**
 * Creating a Message Batch without ever paying for its requests twice. The batch id exists only in
 * the create call's response, so it is recorded at once (heartbeat details, then the result). A
 * worker that dies between the response and the record leaves a batch nobody knows: the next attempt
 * first looks for it: a batch created since the first attempt started, with the same number of
 * requests, is adopted instead of creating another. The adopted batch's custom_ids are checked when
 * its results arrive (src/message-batches/deliver-results.ts); any further such batch is watched as
 * a possible duplicate.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type { MessageBatch } from '@anthropic-ai/sdk/resources/messages/batches';
import type { BatchRequestEntry } from '../core/message-batches';

/** Clock difference allowed between this worker and the API when comparing `created_at`. */
const CLOCK_SLACK_MS = 5_000;
/** Batches listed when looking for one an earlier attempt created (newest first). */
const LIST_LIMIT = 200;

export interface CreatedBatch {
  id: string;
  /** An earlier attempt created it; this one found it in the list. */
  adopted: boolean;
  /** Other batches that may hold the same requests (created by earlier attempts too). */
  duplicateSuspects: string[];
}

export interface CreateAttempt {
  /** Which attempt this is (1 = the first). */
  attempt: number;
  /** When the first attempt was scheduled (ms). */
  firstScheduledAtMs: number;
  /** What an earlier attempt recorded. */
  recordedBatchId?: string;
  /** Records the id the moment it is known. */
  record: (batchId: string) => void;
  signal?: AbortSignal;
}

export async function createOrAdoptBatch(client: Anthropic, entries: readonly BatchRequestEntry[], attempt: CreateAttempt): Promise<CreatedBatch> {
  if (attempt.recordedBatchId) return { id: attempt.recordedBatchId, adopted: true, duplicateSuspects: [] };
  if (attempt.attempt > 1) {
    const candidates = await batchesCreatedSince(client, attempt.firstScheduledAtMs - CLOCK_SLACK_MS, entries.length);
    const [oldest, ...others] = candidates;
    if (oldest) {
      attempt.record(oldest.id);
      return { id: oldest.id, adopted: true, duplicateSuspects: others.map((b) => b.id) };
    }
  }
  const batch = await client.messages.batches.create(
    { requests: entries.map((e) => ({ custom_id: e.batchRequest, params: e.params as never })) },
    attempt.signal ? { signal: attempt.signal } : {},
  );
  attempt.record(batch.id);
  return { id: batch.id, adopted: false, duplicateSuspects: [] };
}

/** Batches created at or after `sinceMs` holding `requests` requests, oldest first. */
async function batchesCreatedSince(client: Anthropic, sinceMs: number, requests: number): Promise<MessageBatch[]> {
  const found: MessageBatch[] = [];
  let seen = 0;
  for await (const batch of client.messages.batches.list({ limit: 100 })) {
    if (Date.parse(batch.created_at) < sinceMs || ++seen > LIST_LIMIT) break;
    if (requestCount(batch) === requests) found.push(batch);
  }
  return found.reverse();
}

function requestCount(batch: MessageBatch): number {
  const c = batch.request_counts;
  return c.processing + c.succeeded + c.errored + c.canceled + c.expired;
}
