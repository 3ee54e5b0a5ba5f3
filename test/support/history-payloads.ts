/**
 * What a workflow's history holds as the server stores it: every payload of every event, read from
 * the raw `GetWorkflowExecutionHistory` answer (the client's `fetchHistory()` would put stored
 * payloads back in place of their references), and which of them are External Storage references.
 */
import type { Client } from '@temporalio/client';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';

const REFERENCE_TYPE = 'temporal.api.sdk.v1.ExternalStorageReference';

/** Every event of the workflow's history, as the server returns it (all pages). */
export async function rawHistoryEvents(client: Client, workflowId: string, runId?: string): Promise<temporal.api.history.v1.IHistoryEvent[]> {
  const events: temporal.api.history.v1.IHistoryEvent[] = [];
  let nextPageToken: Uint8Array | undefined;
  do {
    const page: temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryResponse = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, ...(runId ? { runId } : {}) },
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    events.push(...(page.history?.events ?? []));
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return events;
}

/**
 * The run ids of a workflow id, oldest first, read from the histories (each run's start names the
 * run it continued), so a run that visibility has not listed yet is not missed.
 */
export async function runChain(client: Client, workflowId: string): Promise<string[]> {
  const runs: string[] = [];
  let runId: string | undefined = (await client.workflow.getHandle(workflowId).describe()).runId;
  while (runId) {
    runs.unshift(runId);
    // The run's first event only: its start names the run it continued.
    const page: temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryResponse = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, runId },
      maximumPageSize: 1,
    });
    runId = page.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId || undefined;
  }
  return runs;
}

function isPayload(value: object): value is Payload {
  return 'data' in value && 'metadata' in value && (value as Payload).data instanceof Uint8Array;
}

/** Every payload inside `value` (search attributes included), depth first. */
export function payloadsIn(value: unknown, found: Payload[] = []): Payload[] {
  if (!value || typeof value !== 'object' || value instanceof Uint8Array) return found;
  if (isPayload(value)) {
    found.push(value);
    return found;
  }
  for (const child of Object.values(value)) payloadsIn(child, found);
  return found;
}

/** The size Temporal counts for a payload. */
export function encodedSize(payload: Payload): number {
  return temporal.api.common.v1.Payload.encode(payload).finish().length;
}

/** The driver and claim of a reference payload, or undefined for an inline payload. */
export function storageReference(payload: Payload): { driverName: string; claimData: Record<string, string> } | undefined {
  const type = payload.metadata?.messageType;
  if (!type || new TextDecoder().decode(type) !== REFERENCE_TYPE) return undefined;
  return JSON.parse(new TextDecoder().decode(payload.data!)) as { driverName: string; claimData: Record<string, string> };
}
