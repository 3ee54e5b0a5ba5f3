/**
 * Per-caller limits across `serve` processes: two `mcp-turns serve` processes on one cluster (the
 * test dev server, the harness's worker, the stub Claude) with `serve.limits`. What one process
 * admitted, the other counts: the counts live in each caller's usage ledger, a workflow, not in a
 * process. Over a limit: 429, `Retry-After` and one line naming the limit. Each caller has their
 * own count; an admin is limited only by `limits.admins`. A turn that ended without a word (it was
 * terminated) frees its slot when the caller is refused for it. Turns started for a caller carry
 * the caller's key as their fairness key, and keep their Claude calls where fairness acts.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { resolveServeSettings } from '../../src/config/serve-settings';
import { claudeTaskQueue } from '../../src/core/task-queues';
import { usageLedgerId } from '../../src/core/usage-ledger';
import { admitTurn, usageOf } from '../../src/client/usage-ledger-client';
import { tokenCaller } from '../../src/serve/caller';
import { startServeApp, words } from '../support/serve-app';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { until } from '../support/until';
import { startServeProcess } from '../support/serve-process';

jest.setTimeout(180_000);

const RUN = Date.now().toString(36);
const TOKENS = { alice: `alice-limits-${RUN}-0123456789`, bob: `bob-limits-${RUN}-0123456789`, root: `root-limits-${RUN}-0123456789` };
type Who = keyof typeof TOKENS;
/** Each caller's name, this run's own: a ledger is per caller across the namespace, and other test files have an alice too. */
const NAME: Record<Who, string> = { alice: `alice-${RUN}`, bob: `bob-${RUN}`, root: `root-${RUN}` };

let h: TurnHarness;
const servers: ChildProcess[] = [];
let one: string;
let two: string;

/** `mcp-turns serve` on its own port against the test server and the harness's queue; resolves with its base URL. */
async function startServe(configFile: string): Promise<string> {
  const { url, child } = await startServeProcess(h.taskQueue, { MCP_TURNS_SERVE_TOKENS: `${NAME.alice}:${TOKENS.alice},${NAME.bob}:${TOKENS.bob},${NAME.root}:${TOKENS.root}:admin` }, ['--config', configFile]);
  servers.push(child);
  return url;
}

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios: {
      slow: { perTurn: true, streamDelayMs: 40, steps: [{ content: [{ type: 'text', text: words(50, 'slow') }] }], formatter: { conversation: [{ type: 'text', content: 'Slow.' }] } },
      quick: { perTurn: true, steps: [{ content: [{ type: 'text', text: 'Quick answer.' }] }], formatter: { conversation: [{ type: 'text', content: 'Quick.' }] } },
    },
    servers: {},
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'serve-limits-'));
  const config = path.join(dir, 'mcp.json');
  fs.writeFileSync(config, JSON.stringify({ mcpServers: {}, serve: { limits: { turnsInFlight: 2, admins: { tokensPerDay: 1 } } } }));
  [one, two] = await Promise.all([startServe(config), startServe(config)]);
});

afterAll(async () => {
  for (const s of servers) s.kill('SIGTERM');
  await h?.close();
});

async function startTurn(base: string, who: Who, question: string, model: string): Promise<{ status: number; body: { id?: string; error?: string }; retryAfter: string | null }> {
  const res = await fetch(`${base}/v1/turns`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKENS[who]}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ question, model }),
  });
  return { status: res.status, body: (await res.json()) as { id?: string; error?: string }, retryAfter: res.headers.get('retry-after') };
}

async function finished(id: string): Promise<void> {
  await h.client.workflow.getHandle(id).result();
}

describe('limits shared by two serve processes', () => {
  it('refuses through the second process the turn in flight the first one counted, per caller, until one ends', async () => {
    const first = await startTurn(one, 'alice', 'first slow one', 'slow');
    const second = await startTurn(one, 'alice', 'second slow one', 'slow');
    expect([first.status, second.status]).toEqual([202, 202]);

    const third = await startTurn(two, 'alice', 'one too many', 'slow');
    expect(third).toEqual({ status: 429, body: { error: 'limit turnsInFlight: 2 of 2 turns in flight: retry when one ends' }, retryAfter: '5' });
    // A conversation's message is a turn too.
    const message = await fetch(`${two}/v1/conversations/limits-conv-${RUN}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ text: 'and a message', options: { model: 'quick' } }),
    });
    expect([message.status, await message.json(), message.headers.get('retry-after')]).toEqual([429, { error: 'limit turnsInFlight: 2 of 2 turns in flight: retry when one ends' }, '5']);
    // Another caller's count is their own.
    const bob = await startTurn(two, 'bob', 'bob is not alice', 'quick');
    expect(bob.status).toBe(202);

    await Promise.all([finished(first.body.id!), finished(second.body.id!)]);
    await until(async () => (await usageOf(h.client, tokenCaller(NAME.alice, false).owner.key))?.inFlight === 0, "alice's slots released", 10_000);
    const again = await startTurn(two, 'alice', 'now there is room', 'quick');
    expect(again.status).toBe(202);
    await finished(again.body.id!);
    expect(await usageOf(h.client, tokenCaller(NAME.alice, false).owner.key)).toMatchObject({ inFlight: 0, tokensToday: expect.any(Number) });
    expect((await usageOf(h.client, tokenCaller(NAME.alice, false).owner.key))!.tokensToday).toBeGreaterThan(0);
    // What alice reads of her own usage, through either process.
    const usage = (await (await fetch(`${two}/v1/usage`, { headers: { authorization: `Bearer ${TOKENS.alice}` } })).json()) as Record<string, unknown>;
    expect(usage).toEqual({ day: new Date().toISOString().slice(0, 10), tokensToday: expect.any(Number), inFlight: 0, limits: { turnsInFlight: 2 } });
    expect(usage.tokensToday).toBeGreaterThan(0);
  });

  it("counts an admin's tokens only under limits.admins, and refuses past tokensPerDay until midnight UTC", async () => {
    const first = await startTurn(one, 'root', 'a day of tokens', 'quick');
    expect(first.status).toBe(202);
    await finished(first.body.id!);
    const key = tokenCaller(NAME.root, true).owner.key;
    await until(async () => ((await usageOf(h.client, key))?.tokensToday ?? 0) > 0, "root's tokens counted", 10_000);
    const next = await startTurn(two, 'root', 'one more', 'quick');
    expect(next.status).toBe(429);
    expect(next.body.error).toMatch(/^limit tokensPerDay: \d+ of 1 tokens used today \(UTC\): retry after midnight UTC$/);
    const now = new Date();
    const toMidnight = (Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime()) / 1000;
    expect(Math.abs(Number(next.retryAfter) - toMidnight)).toBeLessThan(60);
  });

  it("gives a turn its caller's key as fairness key, and its Claude calls wait in matching even unstreamed", async () => {
    const res = await fetch(`${one}/v1/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKENS.bob}`, 'content-type': 'application/json' },
      body: JSON.stringify({ question: 'fair and unstreamed', model: 'quick', stream: false }),
    });
    const { id } = (await res.json()) as { id: string };
    await finished(id);
    const key = tokenCaller(NAME.bob, false).owner.key;
    const described = await h.client.workflow.getHandle(id).describe();
    expect(described.raw.workflowExecutionInfo?.priority?.fairnessKey).toBe(key);
    const history = await h.client.workflow.getHandle(id).fetchHistory();
    const scheduled = (history.events ?? []).flatMap((e) => (e.activityTaskScheduledEventAttributes ? [e.activityTaskScheduledEventAttributes] : []));
    const claude = scheduled.filter((a) => a.activityType?.name === 'claude' || a.activityType?.name === 'formatResponse');
    expect(claude.length).toBeGreaterThan(0);
    for (const a of claude) expect(a.taskQueue?.name).toBe(claudeTaskQueue(h.taskQueue));
  });
});

describe('a slot whose turn ended without a word', () => {
  let app: FastifyInstance;
  let base: string;
  afterAll(async () => app?.close());

  it('is freed when its caller is refused for it: the ledger finds the turn gone', async () => {
    const settings = resolveServeSettings({ tokens: [{ name: `carol-${RUN}`, token: `carol-limits-${RUN}-0123456789` }], limits: { turnsInFlight: 1 } }, { host: '127.0.0.1', port: 0 }, {});
    ({ app, base } = await startServeApp(h, settings));
    const key = tokenCaller(`carol-${RUN}`, false).owner.key;
    // Carol's ledger, started ahead with a short stale age (the default is a minute).
    await h.client.workflow.start('usageLedger', { workflowId: usageLedgerId(key), taskQueue: h.taskQueue, args: [{ ownerKey: key, staleAfterMs: 500 }] });
    const post = (question: string) =>
      fetch(`${base}/v1/turns`, {
        method: 'POST',
        headers: { authorization: `Bearer carol-limits-${RUN}-0123456789`, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ question, model: 'slow' }),
      });
    const first = await post('to be terminated');
    expect(first.status).toBe(202);
    const { id } = (await first.json()) as { id: string };
    await h.client.workflow.getHandle(id).terminate('an operator ended it');
    // Refused first (the slot is held, and the repair is asked for), then admitted once the ledger has looked.
    expect((await post('refused')).status).toBe(429);
    let status = 0;
    await until(async () => (status = (await post('admitted')).status) === 202, 'the stale slot freed', 15_000, 300);
    expect(status).toBe(202);
  });
});

describe("a caller's ledger over many admissions", () => {
  it('continues as new with its counts, and admissions sent while it does are asked again, none lost', async () => {
    const key = tokenCaller(`dave-${RUN}`, false).owner.key;
    await h.client.workflow.start('usageLedger', { workflowId: usageLedgerId(key), taskQueue: h.taskQueue, args: [{ ownerKey: key, admissionsPerRun: 3 }] });
    const admissions = await Promise.all(
      Array.from({ length: 8 }, (_, i) => admitTurn(h.client, { ownerKey: key, slot: `slot-${i}`, limits: { turnsInFlight: 6 }, taskQueue: h.taskQueue })),
    );
    expect(admissions.filter((a) => a.admitted)).toHaveLength(6);
    expect(admissions.filter((a) => !a.admitted).map((a) => !a.admitted && a.limit)).toEqual(['turnsInFlight', 'turnsInFlight']);
    const handle = h.client.workflow.getHandle(usageLedgerId(key));
    const described = await handle.describe();
    expect(described.runId).not.toBe(described.raw.workflowExecutionInfo?.firstRunId);
    expect(await usageOf(h.client, key)).toMatchObject({ inFlight: 6 });
  });
});

describe('a ledger no worker runs', () => {
  let app: FastifyInstance;
  let base: string;
  afterAll(async () => app?.close());

  it('is answered 503 naming its queue within seconds, never a request left waiting', async () => {
    const name = `erin-${RUN}`;
    const token = `erin-limits-${RUN}-0123456789`;
    ({ app, base } = await startServeApp(h, resolveServeSettings({ tokens: [{ name, token }], limits: { turnsInFlight: 3 } }, { host: '127.0.0.1', port: 0 }, {})));
    const key = tokenCaller(name, false).owner.key;
    const orphanQueue = `no-worker-${RUN}`;
    await h.client.workflow.start('usageLedger', { workflowId: usageLedgerId(key), taskQueue: orphanQueue, args: [{ ownerKey: key }] });
    const started = Date.now();
    const res = await fetch(`${base}/v1/turns`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ question: 'q', model: 'quick' }),
    });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toMatch(/^limits cannot be checked: the usage ledger mcp-turns-usage-\S+ did not answer in 5 s: is a worker polling task queue /);
    expect(Date.now() - started).toBeLessThan(15_000);
    const usage = await fetch(`${base}/v1/usage`, { headers: { authorization: `Bearer ${token}` } });
    expect(usage.status).toBe(503);
    await h.client.workflow.getHandle(usageLedgerId(key)).terminate();
  });
});
