/**
 * Splits a finished turn's history into its hops, from event timestamps: how long workflow tasks and
 * each activity type waited to be picked up, and how long they ran. Used by bench/turn-overhead to
 * say where the time per tool round goes.
 */
import type { WorkflowHandle } from '@temporalio/client';

type History = Awaited<ReturnType<WorkflowHandle['fetchHistory']>>;
type Event = NonNullable<History['events']>[number];

function ms(e: Event): number {
  const t = e.eventTime!;
  return Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6;
}

function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
}

/** One printable line per hop kind: `<kind>: wait <median> ms, run <median> ms (n=<count>)`. */
export function hopTimes(history: History): string[] {
  const events = history.events ?? [];
  const byId = new Map(events.map((e) => [Number(e.eventId), e]));
  const hops = new Map<string, { wait: number[]; run: number[] }>();
  const add = (kind: string, wait: number, run: number): void => {
    const h = hops.get(kind) ?? { wait: [], run: [] };
    h.wait.push(wait);
    h.run.push(run);
    hops.set(kind, h);
  };
  for (const e of events) {
    if (e.workflowTaskCompletedEventAttributes) {
      const started = byId.get(Number(e.workflowTaskCompletedEventAttributes.startedEventId))!;
      const scheduled = byId.get(Number(e.workflowTaskCompletedEventAttributes.scheduledEventId))!;
      add('workflow task', ms(started) - ms(scheduled), ms(e) - ms(started));
    }
    if (e.activityTaskCompletedEventAttributes) {
      const started = byId.get(Number(e.activityTaskCompletedEventAttributes.startedEventId))!;
      const scheduled = byId.get(Number(e.activityTaskCompletedEventAttributes.scheduledEventId))!;
      const type = scheduled.activityTaskScheduledEventAttributes!.activityType!.name!;
      add(`activity ${type}`, ms(started) - ms(scheduled), ms(e) - ms(started));
    }
  }
  return [...hops].map(
    ([kind, h]) => `${kind.padEnd(24)} wait ${median(h.wait).toFixed(1).padStart(5)} ms, run ${median(h.run).toFixed(1).padStart(5)} ms (n=${h.wait.length})`,
  );
}
