/**
 * `mcp-turns serve` under clients that stop reading: one `serve` process (spawned, so its memory is
 * its own: VmRSS from /proc/<pid>/status) on the shared dev server and a harness's task queue, with
 * `serve.stalledStreamSeconds: 3`; a finished turn whose stream is about 1 MB; then 40 clients on
 * its `GET /v1/turns/{id}/events` that send the request and never read. Serve must write to them
 * no faster than they read (its RSS grows by less than the 40 MB they would be sent), drop each
 * once it has read nothing for the stall limit, and go on serving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TurnStreamEvent } from '../../src/core/stream-events';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { until } from '../support/until';

jest.setTimeout(120_000);

const ROOT = path.resolve(__dirname, '..', '..');
const STALL_SECONDS = 3;
const CLIENTS = 40;
/** 1000 words of 1 KiB, streamed at a pace that publishes them in about 40 events of 25 KiB. */
const ANSWER = Array.from({ length: 1000 }, (_, i) => `w${i}`.padEnd(1023, '.')).join(' ');
const SAMPLE_MS = 50;
const MB = 1024 * 1024;

const mb = (bytes: number): string => `${(bytes / MB).toFixed(1)} MB`;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let h: TurnHarness;
let configDir: string;
let serve: ChildProcess;
let base: string;
let port: number;
/** Serve's stderr lines, with when they came (performance.now()). */
const serveLines: Array<{ line: string; at: number }> = [];
const pythons: ChildProcess[] = [];

/** Resident memory of process `pid`, in bytes. */
function rssOf(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) * 1024;
}

beforeAll(async () => {
  h = await startTurnHarness({
    scenarios: {
      big: {
        streamDelayMs: 8,
        steps: [{ content: [{ type: 'text', text: ANSWER }] }],
        formatter: { conversation: [{ type: 'text', content: 'Done.' }] },
      },
    },
    servers: {},
  });
  configDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-serve-stalled-'));
  const config = path.join(configDir, 'serve.json');
  fs.writeFileSync(config, JSON.stringify({ mcp_servers: {}, serve: { stalledStreamSeconds: STALL_SECONDS } }));
  const env = { ...process.env };
  delete env.MCP_TURNS_CONFIG;
  delete env.MCP_TURNS_SERVE_TOKENS;
  const args = ['serve', '--port', '0', '--config', config, '--address', process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!, '--task-queue', h.taskQueue];
  serve = spawn(process.execPath, [path.join(ROOT, 'bin', 'mcp-turns.js'), ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  base = await new Promise<string>((resolve, reject) => {
    let err = '';
    serve.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      for (const line of d.toString().split('\n').filter(Boolean)) serveLines.push({ line, at: performance.now() });
      const m = /serve on (http:\/\/\S+) /.exec(err);
      if (m) resolve(m[1]!);
    });
    serve.on('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  port = Number(new URL(base).port);
});

afterAll(async () => {
  for (const py of pythons) if (py.exitCode === null && py.signalCode === null) py.kill('SIGKILL');
  if (serve && serve.exitCode === null && serve.signalCode === null) {
    const exited = new Promise((r) => serve.once('exit', r));
    serve.kill('SIGTERM');
    await exited;
  }
  await h?.close();
  if (configDir) fs.rmSync(configDir, { recursive: true, force: true });
});

/** The whole stream of turn `id` as a client that reads gets it. */
async function readStream(id: string): Promise<{ bytes: number; events: TurnStreamEvent[] }> {
  const res = await fetch(`${base}/v1/turns/${id}/events`);
  expect(res.status).toBe(200);
  const text = await res.text();
  const events = [...text.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as TurnStreamEvent);
  return { bytes: Buffer.byteLength(text), events };
}

/**
 * The clients, in python: node:net cannot set a socket's receive buffer or segment size, and with
 * loopback's segment (64 KiB) the kernel alone takes megabytes for a client that reads nothing, so
 * nothing would ever wait in serve. Each socket asks for a network's segment size and a small
 * receive buffer, sends the request and reads nothing until a line comes on stdin; then all read
 * what is left for up to 5 s, each prints a JSON line of what it got (its size, whether serve
 * closed the connection, whether the turn's finish came), and all close.
 */
const CLIENTS_PY = `
import json, selectors, socket, sys, time
host, port, path, n = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
socks = []
for _ in range(n):
    s = socket.socket()
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1400)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((host, port))
    s.sendall(f"GET {path} HTTP/1.1\\r\\nHost: {host}:{port}\\r\\nAccept: text/event-stream\\r\\n\\r\\n".encode())
    socks.append(s)
print("connected", flush=True)
sys.stdin.readline()
sel = selectors.DefaultSelector()
got = [{"bytes": 0, "closed": False, "finished": False} for _ in socks]
data = [b"" for _ in socks]
for i, s in enumerate(socks):
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ, i)
deadline = time.monotonic() + 5
while sel.get_map() and time.monotonic() < deadline:
    for key, _ in sel.select(timeout=max(0, deadline - time.monotonic())):
        i = key.data
        try:
            chunk = key.fileobj.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if chunk:
            data[i] += chunk
        else:
            got[i]["closed"] = True
            sel.unregister(key.fileobj)
for i, s in enumerate(socks):
    got[i]["bytes"] = len(data[i])
    got[i]["finished"] = b'"type":"finish"' in data[i]
    print(json.dumps(got[i]), flush=True)
    s.close()
`;

interface ClientRest {
  bytes: number;
  closed: boolean;
  finished: boolean;
}

/** `count` clients on `urlPath` that read nothing until `readRest` is called. */
async function stalledClients(urlPath: string, count: number): Promise<{ connectedAt: number; readRest(): Promise<ClientRest[]> }> {
  const py = spawn('python3', ['-c', CLIENTS_PY, '127.0.0.1', String(port), urlPath, String(count)], { stdio: ['pipe', 'pipe', 'inherit'] });
  pythons.push(py);
  const lines: string[] = [];
  let partial = '';
  py.stdout!.on('data', (d: Buffer) => {
    const parts = (partial + d.toString()).split('\n');
    partial = parts.pop()!;
    lines.push(...parts);
  });
  await until(() => lines[0] === 'connected' || py.exitCode !== null, 'the clients to connect', 10_000, 10);
  if (lines[0] !== 'connected') throw new Error(`the clients exited ${py.exitCode}`);
  return {
    connectedAt: performance.now(),
    async readRest() {
      py.stdin!.write('read\n');
      await until(() => lines.length > count || py.exitCode !== null, 'the clients to read what was left', 10_000, 50);
      return lines.slice(1, count + 1).map((l) => JSON.parse(l) as ClientRest);
    },
  };
}

it('keeps its memory flat under 40 clients that stop reading a 1 MB stream, and drops them after the stall limit', async () => {
  const started = await fetch(`${base}/v1/turns`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ question: 'a long answer, please', model: 'big' }),
  });
  expect(started.status).toBe(202);
  const { id } = (await started.json()) as { id: string };
  const events = `/v1/turns/${id}/events`;

  // A client that reads gets the whole stream (it ends with the turn's finish): about 1 MB.
  const whole = await readStream(id);
  expect(whole.events.at(-1)).toMatchObject({ type: 'finish', status: 'completed' });
  const text = whole.events.flatMap((e) => (e.type === 'text-delta' ? [e.delta] : [])).join('');
  expect(text.startsWith(ANSWER)).toBe(true);
  expect(whole.bytes).toBeGreaterThan(1_000_000);
  expect(whole.events.length).toBeGreaterThan(20);
  // So do 40 at once.
  const readers = await Promise.all(Array.from({ length: CLIENTS }, () => readStream(id)));
  expect(readers.map((r) => r.bytes)).toEqual(readers.map(() => whole.bytes));

  // The baseline: serve settled, with one stalled client holding a subscription to the turn.
  const linesBefore = serveLines.length;
  const dropped = (): number[] => serveLines.slice(linesBefore).filter((l) => /dropped the event stream/.test(l.line)).map((l) => l.at);
  const holder = await stalledClients(events, 1);
  await sleep(1500);
  const before = rssOf(serve.pid!);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(serve.pid!))), SAMPLE_MS);
  const clients = await stalledClients(events, CLIENTS);
  await until(() => dropped().length > CLIENTS, 'the drops', (STALL_SECONDS + 5) * 1000, SAMPLE_MS).catch(() => undefined);
  clearInterval(sampler);
  peak = Math.max(peak, rssOf(serve.pid!));
  const drops = dropped();

  // What each client got before serve closed its connection: the start of the stream, not its end.
  const rests = [...(await holder.readRest()), ...(await clients.readRest())];
  await sleep(1000);
  const after = rssOf(serve.pid!);
  const sent = rests.map((r) => r.bytes);
  console.log(
    `the stream: ${whole.events.length} events, ${mb(whole.bytes)}. serve's RSS with 1 stalled client ${mb(before)}, ` +
      `peak with ${CLIENTS} more ${mb(peak)} (+${mb(peak - before)}), 1 s after they were dropped or closed ${mb(after)}; ` +
      `${drops.length} dropped, the last ${drops.length ? ((Math.max(...drops) - clients.connectedAt) / 1000).toFixed(1) : '-'} s ` +
      `after the ${CLIENTS} connected (stall limit ${STALL_SECONDS} s); each client got ${mb(Math.min(...sent))}-${mb(Math.max(...sent))}`,
  );
  // Less than the stream for each client: holding what it was sent for each, serve grew by twice that.
  expect(peak - before).toBeLessThan(CLIENTS * whole.bytes);
  expect(drops).toHaveLength(CLIENTS + 1);
  expect((Math.min(...drops) - holder.connectedAt) / 1000).toBeGreaterThanOrEqual(STALL_SECONDS - 0.1);
  expect((Math.max(...drops) - clients.connectedAt) / 1000).toBeLessThan(STALL_SECONDS + 3);
  expect(serveLines.find((l) => /dropped the event stream/.test(l.line))!.line).toMatch(
    new RegExp(`GET ${events} to \\S+: it read nothing for ${STALL_SECONDS}(\\.\\d)? s$`),
  );
  expect(rests).toHaveLength(CLIENTS + 1);
  for (const rest of rests) expect(rest).toMatchObject({ closed: true, finished: false });

  // Serve goes on serving: a client that reads still gets the whole stream.
  expect((await readStream(id)).bytes).toBe(whole.bytes);
});
