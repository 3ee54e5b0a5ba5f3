/**
 * Reading a turn's stream in tests: collecting it, the text of an id as it stands at the end (its
 * deltas after the last retry that discards it), and the checks every streamed two-step turn with
 * an echo call must pass.
 */
import type { TurnStreamEvent } from '../../src/core/stream-events';
import type { ChatTurnResult } from '../../src/core/turn-result';

/** Every event of `stream`, handing each to `onEvent` (with its arrival time) as it comes. */
export async function collect(
  stream: AsyncIterable<TurnStreamEvent>,
  onEvent?: (e: TurnStreamEvent, at: number) => void,
): Promise<TurnStreamEvent[]> {
  const events: TurnStreamEvent[] = [];
  for await (const e of stream) {
    onEvent?.(e, Date.now());
    events.push(e);
  }
  return events;
}

/** The deltas of text id `id` after its last retry, joined. */
export function finalText(events: readonly TurnStreamEvent[], id: string): string {
  let joined = '';
  for (const e of events) {
    if (e.type === 'data-retry' && e.discard.includes(id)) joined = '';
    if (e.type === 'text-delta' && e.id === id) joined += e.delta;
  }
  return joined;
}

type TextDelta = Extract<TurnStreamEvent, { type: 'text-delta' }>;

/** The text deltas of id `id`. */
export function deltasOf(events: readonly TurnStreamEvent[], id: string): TextDelta[] {
  return events.filter((e): e is TextDelta => e.type === 'text-delta' && e.id === id);
}

/** Offsets 0..n-1 in order: no gap, no duplicate. */
export function expectDense(events: readonly TurnStreamEvent[]): void {
  expect(events.map((e) => e.offset)).toEqual(events.map((_, i) => i));
}

/**
 * A completed two-step turn whose first step says `stepOne` and echoes `alpha` and whose second
 * writes `stepTwo`: the tools it offered, its steps, its call and its output, its texts exactly, its answer exactly the
 * result's, and its end.
 */
export function expectEchoThenReply(
  live: readonly TurnStreamEvent[],
  result: ChatTurnResult,
  stepOne: string,
  stepTwo: string,
): void {
  expectDense(live);
  const types = live.map((e) => e.type);
  expect(types[0]).toBe('start');
  // What the turn offered Claude, once, before its first step: server-everything's tools, echo among them.
  expect(types.slice(1, 3)).toEqual(['data-tools', 'start-step']);
  expect(types.filter((t) => t === 'data-tools')).toHaveLength(1);
  const { offered } = live[1] as Extract<TurnStreamEvent, { type: 'data-tools' }>;
  expect(offered).toContainEqual({ name: 'everything__echo', server: 'everything', tool: 'echo' });
  expect(offered.every((t) => t.server === 'everything' && t.name === `everything__${t.tool}`)).toBe(true);
  expect(types.filter((t) => t === 'start-step')).toHaveLength(2);
  expect(types.filter((t) => t === 'finish-step')).toHaveLength(2);
  expect(types.slice(-2)).toEqual(['data-answer', 'finish']);
  expect(finalText(live, 'step-1')).toBe(stepOne);
  expect(finalText(live, 'step-2')).toBe(stepTwo);
  expect(finalText(live, 'answer')).toBe(result.response.conversation);
  const input = live.find((e) => e.type === 'tool-input-available');
  expect(input).toMatchObject({
    toolName: 'everything__echo',
    server: 'everything',
    tool: 'echo',
    input: { message: 'alpha' },
    step: 1,
  });
  const output = live.find((e) => e.type === 'tool-output-available');
  expect(output).toMatchObject({ toolCallId: (input as { toolCallId: string }).toolCallId, isError: false });
  expect(live.indexOf(output!)).toBeGreaterThan(live.indexOf(input!));
  expect(live[live.length - 1]).toMatchObject({
    type: 'finish',
    status: 'completed',
    stopReason: result.stopReason,
    usage: result.usage,
  });
}
