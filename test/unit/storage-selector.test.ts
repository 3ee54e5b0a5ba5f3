import os from 'node:os';
import { ApplicationFailure, defaultPayloadConverter, type Payload } from '@temporalio/common';
import { segment } from '../../src/core/transcript-segment';
import { FsStorageDriver } from '../../src/storage/fs-storage-driver';
import { isTranscriptSegment, smallestStoredSize, storedPayloadSelector } from '../../src/storage/payload-selector';
import { PAYLOAD_TOO_LARGE, payloadLimitSelector } from '../../src/storage/payload-limit';
import { payloadSize } from '../../src/storage/stored-payload';

const toPayload = (value: unknown): Payload => defaultPayloadConverter.toPayload(value);
const messages = (chars: number) => [{ role: 'user' as const, content: 'q'.repeat(chars) }];
const driver = new FsStorageDriver(os.tmpdir());
const thresholds = { thresholdBytes: 256 * 1024, segmentThresholdBytes: 2 * 1024, carriedThresholdBytes: 16 * 1024 };
const select = storedPayloadSelector(driver, thresholds);

describe('isTranscriptSegment', () => {
  it('recognises a segment by the start of its JSON encoding', () => {
    expect(isTranscriptSegment(toPayload(segment(messages(10))))).toBe(true);
    expect(isTranscriptSegment(toPayload({ question: 'hi', transcriptSegment: [] }))).toBe(false);
    // A string whose text looks like a segment is a JSON string: it starts with a quote.
    expect(isTranscriptSegment(toPayload('{"transcriptSegment":[]}'))).toBe(false);
    expect(isTranscriptSegment(toPayload(new TextEncoder().encode('{"transcriptSegment":[]}')))).toBe(false);
  });
});

describe('storedPayloadSelector', () => {
  it('stores any payload from the threshold up, and keeps smaller ones inline', () => {
    const big = toPayload({ text: 'x'.repeat(256 * 1024) });
    const below = toPayload({ text: 'x'.repeat(200 * 1024) });
    expect(payloadSize(big)).toBeGreaterThanOrEqual(thresholds.thresholdBytes);
    expect(select({}, big)).toBe(driver);
    expect(select({}, below)).toBeNull();
  });

  it('stores transcript segments from the small segment threshold up', () => {
    const small = toPayload(segment(messages(100)));
    const segmentSized = toPayload(segment(messages(3000)));
    const other = toPayload({ notASegment: 'q'.repeat(3000) });
    expect(select({}, small)).toBeNull();
    expect(select({}, segmentSized)).toBe(driver);
    expect(select({}, other)).toBeNull();
  });

  it('stores what a conversation keeps, and a child\'s result to its parent, from the carried threshold up', () => {
    const outcome = toPayload({ index: 3, turnId: 'conv-1-turn-3', result: { messages: messages(20_000) } });
    const small = toPayload({ index: 3, turnId: 'conv-1-turn-3', error: 'the turn was cancelled' });
    const conversation = { target: { kind: 'workflow' as const, namespace: 'default', id: 'conv-1', type: 'conversation' } };
    // A child's completion targets its parent, by id, without a type.
    const toParent = { target: { kind: 'workflow' as const, namespace: 'default', id: 'conv-1', runId: 'r' } };
    const turn = { target: { kind: 'workflow' as const, namespace: 'default', id: 'turn-1', type: 'chatTurn' } };
    expect(select(conversation, outcome)).toBe(driver);
    expect(select(toParent, outcome)).toBe(driver);
    expect(select(conversation, small)).toBeNull();
    // A turn's own activity results and inputs keep the general threshold.
    expect(select(turn, outcome)).toBeNull();
    expect(select({}, outcome)).toBeNull();
  });

  it('is offered every payload the smallest threshold could store', () => {
    expect(smallestStoredSize(thresholds)).toBe(2 * 1024);
    expect(smallestStoredSize({ thresholdBytes: 1024, segmentThresholdBytes: 4096, carriedThresholdBytes: 8192 })).toBe(1024);
    expect(smallestStoredSize({ thresholdBytes: 1024, segmentThresholdBytes: 4096, carriedThresholdBytes: 512 })).toBe(512);
  });
});

describe('payloadLimitSelector (storage off)', () => {
  it('keeps payloads under the limit inline', () => {
    expect(payloadLimitSelector()({}, toPayload('x'.repeat(100_000)))).toBeNull();
  });

  it('refuses a payload over the limit with one line: whose, how big, and the fix', () => {
    const payload = toPayload({ history: 'h'.repeat(3_000_000) });
    let thrown: unknown;
    try {
      payloadLimitSelector()({ target: { kind: 'workflow', namespace: 'default', id: 'turn-1', type: 'chatTurn' } }, payload);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    const failure = thrown as ApplicationFailure;
    expect(failure.type).toBe(PAYLOAD_TOO_LARGE);
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toBe(
      "a payload of workflow chatTurn turn-1 is 2.9 MiB, over Temporal's 2.0 MiB payload limit: configure external storage for the client and every worker: " +
        'MCP_TURNS_STORAGE=fs:DIR (one machine) or MCP_TURNS_STORAGE=s3://BUCKET?endpoint=URL (a cluster)',
    );
  });
});
