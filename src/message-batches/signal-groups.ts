/**
 * Signals that carry many items: the items sent to one workflow within `lingerMs` of the first go
 * as one signal, each item an argument. One workflow takes only so many signals a second, and a
 * round of a large batch makes thousands of items at once; each `send` resolves once the signal
 * carrying its item was accepted, so a failed signal fails every send in it.
 */
import type { Client } from '@temporalio/client';

export interface SignalGroupOptions<Target, Item> {
  /** How long the first item waits for others to join its signal. */
  lingerMs: number;
  /** Items in one signal. */
  maxItems: number;
  /** Item bytes in one signal (as `send` counts them). */
  maxBytes: number;
  /** The workflow a target names: items for one workflow go together. */
  workflowIdOf(target: Target): string;
  /** Sends one signal carrying `items` to `target`. */
  deliver(client: Client, target: Target, items: Item[]): Promise<void>;
}

interface Waiting<Item> {
  item: Item;
  resolve: () => void;
  reject: (err: unknown) => void;
}

interface OpenSignal<Target, Item> {
  client: Client;
  target: Target;
  waiting: Waiting<Item>[];
  bytes: number;
  timer: NodeJS.Timeout;
}

export class SignalGroups<Target, Item> {
  private readonly open = new Map<string, OpenSignal<Target, Item>>();

  constructor(private readonly opts: SignalGroupOptions<Target, Item>) {}

  /** Resolves once a signal carrying `item` to `target` was accepted. */
  send(client: Client, target: Target, item: Item, bytes = 0): Promise<void> {
    const workflowId = this.opts.workflowIdOf(target);
    const current = this.open.get(workflowId);
    if (current && current.bytes + bytes > this.opts.maxBytes) this.flush(workflowId);
    return new Promise<void>((resolve, reject) => {
      let signal = this.open.get(workflowId);
      if (!signal) {
        signal = { client, target, waiting: [], bytes: 0, timer: setTimeout(() => this.flush(workflowId), this.opts.lingerMs) };
        this.open.set(workflowId, signal);
      }
      signal.waiting.push({ item, resolve, reject });
      signal.bytes += bytes;
      if (signal.waiting.length >= this.opts.maxItems) this.flush(workflowId);
    });
  }

  private flush(workflowId: string): void {
    const signal = this.open.get(workflowId);
    if (!signal) return;
    this.open.delete(workflowId);
    clearTimeout(signal.timer);
    const { waiting } = signal;
    this.opts.deliver(signal.client, signal.target, waiting.map((w) => w.item)).then(
      () => waiting.forEach((w) => w.resolve()),
      (err: unknown) => waiting.forEach((w) => w.reject(err)),
    );
  }
}
