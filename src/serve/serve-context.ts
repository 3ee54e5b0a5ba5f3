/**
 * What every route of `serve` works with: the Temporal client and where work goes. `serve` keeps
 * nothing else: every answer is read from Temporal, so any `serve` process on the same cluster
 * answers any request and resumes any stream.
 */
import type { Client } from '@temporalio/client';
import { workflowUrl } from '../client/ui-link';
import type { UsageLimits } from '../core/usage-ledger';

export interface ServeContext {
  client: Client;
  address: string;
  namespace: string;
  taskQueue: string;
  /** The Temporal Web UI's base URL. */
  uiUrl: string;
  /** `client` is on the connection of a worker in this process: turns start eagerly. */
  inProcessWorker?: boolean;
  /** Each caller's limits by role (src/serve/usage-limits.ts); none: unlimited. */
  limits?: { user: UsageLimits; admin: UsageLimits };
  /** One line to the operator's log (stderr); never a secret. */
  log(line: string): void;
}

/** The Temporal UI page of workflow `id`. */
export function uiLink(ctx: ServeContext, id: string): string {
  return workflowUrl(ctx.address, ctx.namespace, id, ctx.uiUrl);
}
