/**
 * Both protocol eras in one turn: a modern-only server (the v2 SDK's server, refusing the legacy
 * handshake) over streamable HTTP and over stdio, next to a legacy server (the v1 SDK's) over
 * stdio; Claude calls a tool of each, every call runs once, and the worker's connections say which
 * era each server speaks. The worker connects to each server once and reuses the connection.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { Scenario } from '../../src/stub';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { countingStdio, modernStdio } from '../support/mcp-servers';
import { startModernHttp, stopChild } from './mcp-fixtures';

jest.setTimeout(120_000);

const use = (name: string, input: Record<string, unknown>) => ({ type: 'tool_use' as const, name, input });

const scenarios: Record<string, Scenario> = {
  eras: {
    steps: [
      {
        content: [
          use('legacy__count', { label: 'from-legacy' }),
          use('remote__lookup_order', { orderId: 'A-17' }),
          use('local__echo', { message: 'from-modern-stdio' }),
        ],
      },
      { content: [{ type: 'text', text: 'done: {{toolResults}}' }] },
    ],
    formatter: { conversation: [{ type: 'text', content: '{{toolResults}}' }] },
  },
};

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-eras-'));
const counts = { legacy: path.join(dir, 'legacy.jsonl'), remote: path.join(dir, 'remote.jsonl'), local: path.join(dir, 'local.jsonl') };
const lines = (file: string): Array<{ tool: string }> =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];

let h: TurnHarness;
let remote: { child: ChildProcess; url: string };

beforeAll(async () => {
  remote = await startModernHttp(counts.remote);
  h = await startTurnHarness({
    scenarios,
    servers: {
      legacy: countingStdio(counts.legacy),
      remote: { type: 'streamable-http', url: remote.url },
      local: modernStdio(counts.local),
    },
  });
});
afterAll(async () => {
  await h?.close();
  if (remote) await stopChild(remote.child);
  fs.rmSync(dir, { recursive: true, force: true });
});

it('refuses the legacy handshake at the modern-only server (HTTP 400, -32022 naming 2026-07-28)', async () => {
  const res = await fetch(remote.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'v1', version: '1' } },
    }),
  });
  expect(res.status).toBe(400);
  expect(await res.json()).toMatchObject({ error: { code: -32022, data: { supported: ['2026-07-28'] } } });
});

it('calls a modern-only server (HTTP and stdio) and a legacy server in the same turn, each call once', async () => {
  const result = await h.run({ question: 'look it all up', model: 'eras', servers: ['legacy', 'remote', 'local'] });
  expect(result.stopReason).toBe('completed');
  expect(result.unavailableServers ?? []).toEqual([]);
  expect(result.toolCalls.map((c) => [c.server, c.tool, c.isError])).toEqual([
    ['legacy', 'count', false],
    ['remote', 'lookup_order', false],
    ['local', 'echo', false],
  ]);
  const results = JSON.stringify(result.messages);
  expect(results).toContain('counted from-legacy');
  expect(results).toContain('order A-17: shipped');
  expect(results).toContain('from-modern-stdio');
  expect([lines(counts.legacy), lines(counts.remote), lines(counts.local)].map((l) => l.map((x) => x.tool))).toEqual([
    ['count'],
    ['lookup_order'],
    ['echo'],
  ]);

  const eras = Object.fromEntries(h.pool.status().map((s) => [s.server, [s.era, s.connected, s.spawned]]));
  expect(eras).toEqual({ legacy: ['legacy', true, 1], remote: ['modern', true, 0], local: ['modern', true, 1] });

  // A second turn reuses every connection: no new process, no new connect.
  await h.run({ question: 'and again', model: 'eras', servers: ['legacy', 'remote', 'local'] });
  expect(h.pool.status().map((s) => s.spawned)).toEqual([1, 0, 1]);
  expect(lines(counts.remote)).toHaveLength(2);
});
