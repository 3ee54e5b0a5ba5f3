/**
 * A request's `custom_id` in a Message Batch: `^[a-zA-Z0-9_-]{1,64}$`, unique in its batch. It is a
 * hash of the turn's run and the call's key (its call number, formatter round and attempt), so the
 * same submission gets the same id again (a retried activity is recognised and not sent twice),
 * a retried request gets a new one, and no workflow id, which may hold anything, is ever sent.
 */
import { createHash } from 'node:crypto';

export function batchCustomId(workflowId: string, runId: string, key: string): string {
  return createHash('sha256').update(`${workflowId}\n${runId}\n${key}`).digest('base64url');
}
