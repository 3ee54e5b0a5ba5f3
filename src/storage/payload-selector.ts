/**
 * Which payloads go to external storage: every payload of `thresholdBytes` or more, and every
 * transcript segment (src/core/transcript-segment.ts) of `segmentThresholdBytes` or more. Segments
 * are stored even when small because a conversation sends each one again with every later call:
 * stored, each is kept once and history holds only its claim.
 */
import type { Payload, StorageDriver, StorageDriverSelector } from '@temporalio/common';
import { TRANSCRIPT_SEGMENT_JSON_PREFIX } from '../core/transcript-segment';
import { payloadSize } from './stored-payload';

const SEGMENT_PREFIX = new TextEncoder().encode(TRANSCRIPT_SEGMENT_JSON_PREFIX);
const JSON_ENCODING = 'json/plain';

/** Sizes at which payloads are stored. */
export interface StorageThresholds {
  /** Any payload this size or larger is stored. */
  thresholdBytes: number;
  /** A transcript segment this size or larger is stored. */
  segmentThresholdBytes: number;
}

/** True when the payload is a JSON-encoded transcript segment. */
export function isTranscriptSegment(payload: Payload): boolean {
  const encoding = payload.metadata?.encoding;
  if (!encoding || new TextDecoder().decode(encoding) !== JSON_ENCODING) return false;
  const data = payload.data;
  if (!data || data.length < SEGMENT_PREFIX.length) return false;
  return SEGMENT_PREFIX.every((byte, i) => data[i] === byte);
}

/** The smallest size any payload is stored at: the SDK offers the selector only payloads this large. */
export function smallestStoredSize(thresholds: StorageThresholds): number {
  return Math.min(thresholds.thresholdBytes, thresholds.segmentThresholdBytes);
}

/** A selector that sends what the thresholds say to `driver` and keeps the rest inline. */
export function storedPayloadSelector(driver: StorageDriver, thresholds: StorageThresholds): StorageDriverSelector {
  return (_context, payload) => {
    const size = payloadSize(payload);
    if (size >= thresholds.thresholdBytes) return driver;
    if (size >= thresholds.segmentThresholdBytes && isTranscriptSegment(payload)) return driver;
    return null;
  };
}
