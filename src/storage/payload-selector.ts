/**
 * Which payloads go to external storage: every payload of `thresholdBytes` or more; every
 * transcript segment (src/core/transcript-segment.ts) of `segmentThresholdBytes` or more; and every
 * payload a workflow carries on with of `carriedThresholdBytes` or more: what a conversation keeps
 * (the outcome each message's update answers with, its continue-as-new input) and a child's result
 * handed to its parent. Segments are stored even when small because a conversation sends each one
 * again with every later call; carried payloads because a conversation answers hundreds of
 * messages, and each would otherwise add its turn's messages to the conversation's history twice.
 * Stored, each is kept once and history holds only its claim.
 */
import type { Payload, StorageDriver, StorageDriverSelectContext, StorageDriverSelector } from '@temporalio/common';
import { TRANSCRIPT_SEGMENT_JSON_PREFIX } from '../core/transcript-segment';
import { BATCH_REQUEST_JSON_PREFIX, COLLECTOR_REQUEST_JSON_PREFIX } from '../core/message-batches';
import { payloadSize } from './stored-payload';

const SEGMENT_PREFIXES = [TRANSCRIPT_SEGMENT_JSON_PREFIX, BATCH_REQUEST_JSON_PREFIX, COLLECTOR_REQUEST_JSON_PREFIX].map((p) => new TextEncoder().encode(p));
const JSON_ENCODING = 'json/plain';
/** Workflow types whose payloads are carried on: the conversation, and the Message Batch collector (what it waits for). */
const CARRYING_WORKFLOWS = new Set(['conversation', 'messageBatchCollector']);

/** Sizes at which payloads are stored. */
export interface StorageThresholds {
  /** Any payload this size or larger is stored. */
  thresholdBytes: number;
  /** A transcript segment this size or larger is stored. */
  segmentThresholdBytes: number;
  /** A payload a conversation keeps, or a child's result to its parent, this size or larger is stored. */
  carriedThresholdBytes: number;
}

/**
 * Set by the encryption codec (src/encryption/encryption-codec.ts) on a transcript segment it
 * encrypted: the ciphertext no longer shows the segment's prefix.
 */
export const SEGMENT_METADATA = 'mcp-turns-segment';

/**
 * True when the payload is a transcript segment, or a Message Batch request (a collector is sent
 * thousands of them, and its create input is thousands of them, so each is stored as readily as a
 * segment): JSON-encoded, or encrypted and marked as one.
 */
export function isTranscriptSegment(payload: Payload): boolean {
  const marked = payload.metadata?.[SEGMENT_METADATA];
  if (marked) return new TextDecoder().decode(marked) === '1';
  const encoding = payload.metadata?.encoding;
  if (!encoding || new TextDecoder().decode(encoding) !== JSON_ENCODING) return false;
  const data = payload.data;
  return Boolean(data) && SEGMENT_PREFIXES.some((prefix) => data!.length >= prefix.length && prefix.every((byte, i) => data![i] === byte));
}

/** The smallest size any payload is stored at: the SDK offers the selector only payloads this large. */
export function smallestStoredSize(thresholds: StorageThresholds): number {
  return Math.min(thresholds.thresholdBytes, thresholds.segmentThresholdBytes, thresholds.carriedThresholdBytes);
}

/**
 * The payload is one a workflow carries on with: produced by a conversation (its update outcomes,
 * its continue-as-new input) or a Message Batch collector (the requests it is sent, what it carries
 * to its next run), or a child's result, whose target is the parent and names no type.
 */
export function isCarried(context: StorageDriverSelectContext): boolean {
  const target = context.target;
  return target?.kind === 'workflow' && ((target.type !== undefined && CARRYING_WORKFLOWS.has(target.type)) || (target.type === undefined && target.id !== undefined));
}

/** A selector that sends what the thresholds say to `driver` and keeps the rest inline. */
export function storedPayloadSelector(driver: StorageDriver, thresholds: StorageThresholds): StorageDriverSelector {
  return (context, payload) => {
    const size = payloadSize(payload);
    if (size >= thresholds.thresholdBytes) return driver;
    if (size >= thresholds.segmentThresholdBytes && isTranscriptSegment(payload)) return driver;
    if (size >= thresholds.carriedThresholdBytes && isCarried(context)) return driver;
    return null;
  };
}
