/**
 * The kept area of a store, for payloads stored once and read for as long as a batch schedule
 * lives: the arguments of a schedule's `scheduledBatch` action (with its memo and header), stored
 * when the schedule is created or updated, never sent again, and read by every run, maybe months
 * later. They live beside the store's own objects, outside what the age-based clean-up of
 * docs/storage.md ("Retention") touches: the filesystem store `<dir>` keeps them in `<dir>.kept`,
 * the S3 store with prefix `prod/` under `prod.kept/` (without a prefix, under `kept/`). Their
 * claims say `area: kept`, so a reader looks there; a claim without an area is in the store's own
 * area. What a run stores names the run (its target has a run id) and ages out as usual. Nothing
 * removes a kept payload: it is keyed by content, so another schedule may share it.
 */
import path from 'node:path';
import type { StorageDriverClaim, StorageDriverTargetInfo } from '@temporalio/common';
import { SCHEDULED_BATCH_WORKFLOW } from '../core/batch-schedule';
import { StoredPayloadError } from './stored-payload';

/** The value of a claim's `area` for a payload in the kept area. */
export const KEPT_AREA = 'kept';

/**
 * True when payloads stored for `target` go to the kept area: a `scheduledBatch` workflow that has
 * no run yet (a schedule's action, or a start by a client; a run's continue-as-new input too).
 */
export function isKeptTarget(target: StorageDriverTargetInfo | undefined): boolean {
  return target?.kind === 'workflow' && target.type === SCHEDULED_BATCH_WORKFLOW && target.runId === undefined;
}

/** What a claim carries besides its key and store: `area: kept` for the kept area, nothing for the store's own. */
export function areaClaimData(kept: boolean): Record<string, string> {
  return kept ? { area: KEPT_AREA } : {};
}

/** True when a claim is of the kept area; a claim of an area this version does not know is refused. */
export function isKeptClaim(claim: StorageDriverClaim, driverName: string): boolean {
  const area = claim.claimData.area;
  if (area === undefined) return false;
  if (area === KEPT_AREA) return true;
  throw new StoredPayloadError(`not a claim of the ${driverName} driver (unknown area ${JSON.stringify(area)}): ${JSON.stringify(claim.claimData)}`);
}

/** The kept area of the filesystem store `dir`: its sibling `<dir>.kept`. */
export function keptAreaDir(dir: string): string {
  return `${path.resolve(dir)}.kept`;
}

/**
 * The kept area of the S3 store whose keys start with `prefix` (empty, or ending in `/`): its
 * sibling `<prefix without the slash>.kept/`, or `kept/` for a store without a prefix (whose kept
 * area is inside the bucket an age rule would cover: such a rule needs the store to have a prefix).
 */
export function keptAreaPrefix(prefix: string): string {
  return prefix === '' ? `${KEPT_AREA}/` : `${prefix.replace(/\/+$/, '')}.${KEPT_AREA}/`;
}
