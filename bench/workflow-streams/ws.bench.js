#!/usr/bin/env node
// Workflow Streams (@temporalio/workflow-streams) cost bench.
// Self-contained: starts its own in-memory Temporal dev server on free ports, a worker and
// client in this process, runs the configs below, prints figures, stops the server.
//
//   node ws.bench.js                 # default run
//   TURNS=5 TEMPORAL_BIN=/path/temporal node ws.bench.js
//
// History bytes = sum over all events (all pages) of
//   temporal.api.history.v1.HistoryEvent.encode(e).finish().length   (protobuf wire size)
// and, as a cross-check, describe().historySize (the server's own figure).
'use strict';
const path = require('path');
const os = require('os');
const fs = require('fs');
const net = require('net');
const { spawn } = require('child_process');
const { Connection, Client, makeGrpcRetryInterceptor, defaultGrpcRetryOptions } = require('@temporalio/client');
// grpc-js as installed for @temporalio/client (used only to count UpdateWorkflowExecution attempt statuses)
const grpc = require(require.resolve('@grpc/grpc-js', { paths: [path.dirname(require.resolve('@temporalio/client/package.json'))] }));
const { Worker, NativeConnection, Runtime, DefaultLogger, bundleWorkflowCode, makeTelemetryFilterString } = require('@temporalio/worker');
const { Context } = require('@temporalio/activity');
const { temporal } = require('@temporalio/proto');
const { WorkflowStreamClient } = require('@temporalio/workflow-streams/client');

const TEMPORAL_BIN = process.env.TEMPORAL_BIN || path.join(__dirname, '..', '..', '.mcp-turns', 'bin', 'temporal');
// server's per-run limit of in-flight (admitted, not completed) updates; unset = server default (10)
const MAX_INFLIGHT_UPDATES = process.env.MAX_INFLIGHT_UPDATES;
const CONFIGS = process.env.CONFIGS; // optional substring filter on config names
const TURNS = +(process.env.TURNS || 5);
const DELTAS = 40; // per model step
const GAP_MS = 20; // between deltas
const TOPIC = 'events';
const EXPECTED = 2 * DELTAS + 6; // 80 deltas + 6 tool/step events
const TQ = 'ws-bench';
const NS = 'default';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const HistoryEvent = temporal.api.history.v1.HistoryEvent;
const EventType = temporal.api.enums.v1.EventType;
const typeName = (t) => (EventType[t] || String(t)).replace(/^EVENT_TYPE_/, '');

function freePort() {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => res(p));
    });
    s.on('error', rej);
  });
}

function procCpuMs(pid) {
  // /proc/<pid>/stat: fields after "(comm)"; utime=14, stime=15 (1-based) in clock ticks (100/s here)
  const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = st.slice(st.lastIndexOf(')') + 2).split(' ');
  return ((+f[11] + +f[12]) * 1000) / 100;
}

// ---------------- activities ----------------
// Publishing the way @temporalio/ai-sdk's invokeModelStreaming does:
// WorkflowStreamClient.fromWithinActivity({ batchInterval }) + topic().publish() per part,
// flushed on dispose. With stream=false the activity does the same work/pacing, publishes nothing.
async function withPublisher(opts, fn) {
  if (!opts.stream) return fn(() => {});
  const ws = WorkflowStreamClient.fromWithinActivity(
    opts.batchIntervalMs ? { batchInterval: opts.batchIntervalMs } : undefined // undefined => package default
  );
  const topic = ws.topic(TOPIC);
  try {
    return await fn((ev) => topic.publish({ ...ev, t: Date.now() }));
  } finally {
    await ws[Symbol.asyncDispose]();
  }
}
const activities = {
  async modelStep(opts) {
    return withPublisher(opts, async (pub) => {
      pub({ type: 'start-step', step: opts.step });
      for (let i = 0; i < opts.deltas; i++) {
        await sleep(opts.gapMs);
        Context.current().heartbeat();
        pub({ type: 'text-delta', step: opts.step, i, delta: `word${i} ` });
      }
      for (const type of opts.tail) pub({ type, step: opts.step });
      return opts.deltas;
    });
  },
  async toolCall(opts) {
    return withPublisher(opts, async (pub) => {
      await sleep(50);
      for (const type of opts.events) pub({ type, toolUseId: 'toolu_1', content: 'ok 42' });
      return 'ok';
    });
  },
};
// Fix event count: step1 = start-step + 40 deltas + tool-call + finish-step  (43)
//                  tool  = tool-result                                       (1)
//                  step2 = start-step + 40 deltas + finish                   (42)  => 86 (= EXPECTED)

// ---------------- helpers ----------------
// Counts the gRPC status of every UpdateWorkflowExecution *attempt* (placed inside the SDK's retry
// interceptor, so RESOURCE_EXHAUSTED rejections that the SDK retries silently are visible).
const updStatus = {};
function countingInterceptor(options, nextCall) {
  const isUpd = options.method_definition.path.endsWith('/UpdateWorkflowExecution');
  return new grpc.InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      next(metadata, {
        onReceiveStatus(status, nxt) {
          if (isUpd) {
            const k = grpc.status[status.code];
            updStatus[k] = (updStatus[k] || 0) + 1;
          }
          nxt(status);
        },
      });
    },
  });
}
async function fetchHistory(client, workflowId, runId) {
  const events = [];
  let nextPageToken;
  do {
    const resp = await client.workflowService.getWorkflowExecutionHistory({
      namespace: NS,
      execution: { workflowId, runId },
      nextPageToken,
      maximumPageSize: 1000,
    });
    events.push(...(resp.history?.events || []));
    nextPageToken = resp.nextPageToken && resp.nextPageToken.length ? resp.nextPageToken : undefined;
  } while (nextPageToken);
  let bytes = 0;
  const byType = {};
  for (const e of events) {
    bytes += HistoryEvent.encode(e).finish().length;
    const n = typeName(e.eventType);
    byType[n] = (byType[n] || 0) + 1;
  }
  return { n: events.length, bytes, byType };
}

function subscriber(client, workflowId) {
  const st = { polls: 0, outcomes: {}, items: 0, deltas: 0, lags: [], err: undefined, lastOffset: -1, gaps: 0, endedAt: 0 };
  st.done = (async () => {
    try {
      const sc = WorkflowStreamClient.create(client, workflowId);
      // Diagnostics only: wrap the handle's startUpdate to see how each long-poll ended
      // (subscribe() swallows the reason when it ends the stream).
      const h = sc.handle;
      const orig = h.startUpdate.bind(h);
      h.startUpdate = async (...a) => {
        st.polls++;
        let uh;
        try {
          uh = await orig(...a);
        } catch (e) {
          st.outcomes[`startUpdate:${e.name}:${(e.message || '').slice(0, 60)}`] = (st.outcomes[`startUpdate:${e.name}:${(e.message || '').slice(0, 60)}`] || 0) + 1;
          throw e;
        }
        const res = uh.result.bind(uh);
        uh.result = async () => {
          try {
            return await res();
          } catch (e) {
            const k = `result:${e.name}:${e.cause?.type || e.cause?.name || ''}:${(e.cause?.message || e.message || '').slice(0, 60)}`;
            st.outcomes[k] = (st.outcomes[k] || 0) + 1;
            throw e;
          }
        };
        return uh;
      };
      for await (const it of sc.topic(TOPIC).subscribe(0)) {
        if (it.offset !== st.lastOffset + 1) st.gaps++;
        st.lastOffset = it.offset;
        st.items++;
        if (it.data && it.data.type === 'text-delta') {
          st.deltas++;
          st.lags.push(Date.now() - it.data.t);
        }
      }
    } catch (e) {
      st.err = `${e.name}: ${e.message}${e.cause ? ` (cause ${e.cause.name}: ${e.cause.message})` : ''}`;
    }
    st.endedAt = Date.now();
  })();
  return st;
}

const pct = (a, p) => {
  if (!a.length) return NaN;
  const s = [...a].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
const r1 = (x) => Math.round(x * 10) / 10;

// ---------------- main ----------------
async function main() {
  const t0 = Date.now();
  console.log(`node ${process.version}, cpus=${os.cpus().length} (${os.cpus()[0].model}), loadavg(1/5/15)=${os.loadavg().map((x) => x.toFixed(2)).join('/')}`);
  const vers = {};
  for (const p of ['client', 'worker', 'workflow', 'common', 'proto', 'activity', 'workflow-streams']) {
    vers[p] = require(`@temporalio/${p}/package.json`).version;
  }
  console.log('versions', JSON.stringify(vers));
  console.log(`temporal CLI: ${TEMPORAL_BIN}; history.maxInFlightUpdates=${MAX_INFLIGHT_UPDATES || 'server default (10)'}; TURNS=${TURNS}`);

  // ---- dev server ----
  const port = await freePort();
  const uiPort = await freePort();
  const srv = spawn(
    TEMPORAL_BIN,
    [
      'server', 'start-dev', '--headless', '--ip', '127.0.0.1', '--port', String(port), '--ui-port', String(uiPort),
      '--log-level', 'error',
      '--dynamic-config-value', 'frontend.enableUpdateWorkflowExecution=true',
      '--dynamic-config-value', 'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
      ...(MAX_INFLIGHT_UPDATES ? ['--dynamic-config-value', `history.maxInFlightUpdates=${MAX_INFLIGHT_UPDATES}`] : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] }
  );
  let srvErr = '';
  srv.stderr.on('data', (d) => (srvErr += d));
  const stopServer = () => {
    try { srv.kill('SIGTERM'); } catch {}
  };
  process.on('exit', stopServer);
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => { console.error(`got ${sig}, stopping dev server`); process.exit(130); });
  const HARD_LIMIT_S = +(process.env.HARD_LIMIT_S || 290);
  setTimeout(() => { console.error(`hard limit ${HARD_LIMIT_S}s reached, aborting`); process.exit(2); }, HARD_LIMIT_S * 1000).unref();
  const address = `127.0.0.1:${port}`;
  let connection;
  for (let i = 0; i < 150; i++) {
    try {
      connection = await Connection.connect({ address, connectTimeout: 1000 });
      await connection.workflowService.getSystemInfo({});
      break;
    } catch {
      connection = undefined;
      await sleep(200);
    }
  }
  if (!connection) throw new Error(`dev server did not come up: ${srvErr}`);
  // namespace may lag a moment behind the frontend
  for (let i = 0; i < 50; i++) {
    try { await connection.workflowService.describeNamespace({ namespace: NS }); break; } catch { await sleep(200); }
  }
  console.log(`dev server pid=${srv.pid} port=${port} (${((Date.now() - t0) / 1000).toFixed(1)}s to ready)`);
  const client = new Client({ connection, namespace: NS });
  // subscribers' own connection: default retry interceptor + attempt counter
  const subConnection = await Connection.connect({
    address,
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions()), countingInterceptor],
  });
  const subClient = new Client({ connection: subConnection, namespace: NS });

  // ---- worker ----
  const warnCounts = {};
  Runtime.install({
    shutdownSignals: [], // our own SIGINT/SIGTERM handler stops the dev server and exits
    logger: new DefaultLogger('WARN', (e) => {
      const k = e.message.slice(0, 90);
      warnCounts[k] = (warnCounts[k] || 0) + 1;
    }),
    telemetryOptions: { logging: { forward: {}, filter: makeTelemetryFilterString({ core: 'WARN' }) } },
  });
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('./ws.workflows.js'),
    logger: new DefaultLogger('ERROR'),
  });
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address }),
    namespace: NS,
    taskQueue: TQ,
    workflowBundle,
    activities,
  });
  const workerRun = worker.run();

  // ---- idle server CPU rate ----
  await sleep(1000);
  let c0 = procCpuMs(srv.pid);
  await sleep(3000);
  const idleRate = (procCpuMs(srv.pid) - c0) / 3; // ms CPU per s wall
  console.log(`server idle CPU: ${idleRate.toFixed(1)} ms/s`);

  let seq = 0;
  async function runTurn(cfg) {
    const workflowId = `turn-${cfg.name}-${++seq}`;
    const handle = await client.workflow.start('turn', {
      taskQueue: TQ,
      workflowId,
      args: [{ stream: cfg.stream, deltas: DELTAS, gapMs: GAP_MS, batchIntervalMs: cfg.batchIntervalMs, graceMs: cfg.graceMs || 0 }],
    });
    const subs = [];
    for (let i = 0; i < cfg.subs; i++) subs.push(subscriber(subClient, workflowId));
    await handle.result();
    const closedAt = Date.now();
    await Promise.race([Promise.all(subs.map((s) => s.done)), sleep(15000)]);
    return { workflowId, runId: handle.firstExecutionRunId, subs, closedAt };
  }

  async function runConfig(cfg) {
    // warm-up turn (not counted): first-time task-queue / connection costs
    if (cfg.warmup) await runTurn(cfg);
    const wall0 = Date.now();
    const s0 = procCpuMs(srv.pid);
    const b0 = process.cpuUsage();
    const u0 = { ...updStatus };
    const turns = [];
    for (let i = 0; i < TURNS; i++) turns.push(await runTurn(cfg));
    const wall = (Date.now() - wall0) / 1000;
    const srvCpu = procCpuMs(srv.pid) - s0;
    const bu = process.cpuUsage(b0);
    const updAttempts = Object.fromEntries(Object.entries(updStatus).map(([k, v]) => [k, r1((v - (u0[k] || 0)) / TURNS)]).filter(([, v]) => v > 0));
    // histories (outside the CPU window)
    const hs = [];
    for (const t of turns) {
      const h = await fetchHistory(client, t.workflowId, t.runId);
      const d = await client.workflow.getHandle(t.workflowId, t.runId).describe();
      h.serverHistorySize = d.historySize;
      hs.push(h);
    }
    const avg = (f) => mean(hs.map(f));
    const bt = (k) => avg((h) => h.byType[k] || 0);
    const allSubs = turns.flatMap((t) => t.subs);
    const complete = allSubs.filter((s) => s.items === EXPECTED && !s.err && s.gaps === 0).length;
    const lags = allSubs.flatMap((s) => s.lags);
    const res = {
      name: cfg.name,
      subs: cfg.subs,
      turns: TURNS,
      wallPerTurnS: r1((wall / TURNS) * 10) / 10,
      events: r1(avg((h) => h.n)),
      bytes: Math.round(avg((h) => h.bytes)),
      serverHistorySize: Math.round(avg((h) => h.serverHistorySize || 0)),
      signaled: r1(bt('WORKFLOW_EXECUTION_SIGNALED')),
      updAccepted: r1(bt('WORKFLOW_EXECUTION_UPDATE_ACCEPTED')),
      updCompleted: r1(bt('WORKFLOW_EXECUTION_UPDATE_COMPLETED')),
      wftCompleted: r1(bt('WORKFLOW_TASK_COMPLETED')),
      srvCpuMsPerTurn: r1(srvCpu / TURNS),
      srvCpuMsPerTurnMinusIdle: r1((srvCpu - idleRate * wall) / TURNS),
      benchProcCpuMsPerTurn: r1((bu.user + bu.system) / 1000 / TURNS),
    };
    if (cfg.subs > 0) {
      res.subsComplete = `${complete}/${allSubs.length}`;
      res.itemsPerSub = `min ${Math.min(...allSubs.map((s) => s.items))} max ${Math.max(...allSubs.map((s) => s.items))} of ${EXPECTED}`;
      res.subErrors = [...new Set(allSubs.filter((s) => s.err).map((s) => s.err))];
      const oc = {};
      for (const s of allSubs) for (const [k, v] of Object.entries(s.outcomes)) oc[k] = (oc[k] || 0) + v;
      res.pollEndings = oc; // non-OK endings of poll updates, summed over subscribers
      res.pollsPerSub = r1(mean(allSubs.map((s) => s.polls)));
      res.updateRpcAttemptStatusPerTurn = updAttempts; // includes attempts the SDK retried
      const short = allSubs.filter((s) => s.items < EXPECTED);
      res.shortSubs = short.slice(0, 6).map((s) => ({ items: s.items, polls: s.polls, outcomes: s.outcomes }));
      res.deltaLagMs = `p50 ${pct(lags, 50)} p95 ${pct(lags, 95)} max ${pct(lags, 100)}`;
      res.subEndAfterCloseMs = `p50 ${pct(allSubs.map((s) => s.endedAt - turns.find((t) => t.subs.includes(s)).closedAt), 50)}`;
    }
    res.byType = Object.fromEntries(
      Object.keys(Object.assign({}, ...hs.map((h) => h.byType)))
        .sort()
        .map((k) => [k, r1(bt(k))])
    );
    return res;
  }

  const BI = 100; // ms, the publisher batchInterval @temporalio/ai-sdk uses (package default is 2 s)
  const configs = [
    { name: 'baseline-no-stream', stream: false, subs: 0, warmup: true },
    { name: 'stream-0sub', stream: true, subs: 0, batchIntervalMs: BI, warmup: true },
    { name: 'stream-1sub', stream: true, subs: 1, batchIntervalMs: BI },
    { name: 'stream-1sub-grace1s', stream: true, subs: 1, batchIntervalMs: BI, graceMs: 1000 },
    { name: 'stream-20sub', stream: true, subs: 20, batchIntervalMs: BI },
    { name: 'stream-20sub-grace1s', stream: true, subs: 20, batchIntervalMs: BI, graceMs: 1000 },
    { name: 'stream-1sub-pkgdefault-batch2s', stream: true, subs: 1, batchIntervalMs: undefined },
    { name: 'baseline-no-stream(again)', stream: false, subs: 0 },
  ].filter((c) => !CONFIGS || c.name.startsWith('baseline-no-stream') && !c.name.includes('again') || CONFIGS.split(',').some((f) => c.name.includes(f)));
  const results = [];
  for (const cfg of configs) {
    const r = await runConfig(cfg);
    results.push(r);
    console.log(`\n== ${r.name}  (loadavg ${os.loadavg().map((x) => x.toFixed(2)).join('/')})`);
    console.log(JSON.stringify(r));
  }

  // ---- subscribe after close ----
  console.log('\n== subscribe AFTER the workflow closed');
  {
    const { workflowId, runId } = await runTurn({ name: 'late', stream: true, subs: 0, batchIntervalMs: BI });
    const desc = await client.workflow.getHandle(workflowId).describe();
    const t = Date.now();
    const s = subscriber(subClient, workflowId);
    await Promise.race([s.done, sleep(15000)]);
    console.log(JSON.stringify({ status: desc.status.name, itemsReceived: s.items, error: s.err || null, returnedAfterMs: Date.now() - t, finished: !!s.endedAt }));
    // what the log still holds (query replays the closed run on the worker)
    try {
      const off = await WorkflowStreamClient.create(client, workflowId).getOffset();
      console.log(`offset query on the closed run: ${off} (items are in the closed run's state / history, but poll cannot read them)`);
    } catch (e) {
      console.log(`offset query on closed run failed: ${e.name}: ${e.message}`);
    }
    // raw poll update against the closed run, to show the server's answer
    try {
      await client.workflow.getHandle(workflowId, runId).executeUpdate('__temporal_workflow_stream_poll', { args: [{ topics: [], from_offset: 0 }] });
      console.log('raw poll update on closed run: succeeded?!');
    } catch (e) {
      console.log(`raw poll update on closed run -> ${e.name}: ${e.message}`);
    }
  }

  // ---- summary ----
  const base = results[0];
  console.log('\n== summary (per turn; ratios vs baseline-no-stream)');
  console.log('config                        subs  events  xEv   bytes     xBy   signals  updAcc  updCmp  srvCPUms  xCPU  (minus idle  x)   benchCPUms  complete');
  for (const r of results) {
    const x = (a, b) => (a / b).toFixed(2);
    console.log(
      `${r.name.padEnd(30)}${String(r.subs).padStart(4)}${String(r.events).padStart(8)}${x(r.events, base.events).padStart(6)}${String(r.bytes).padStart(8)}${x(r.bytes, base.bytes).padStart(8)}${String(r.signaled).padStart(9)}${String(r.updAccepted).padStart(8)}${String(r.updCompleted).padStart(8)}${String(r.srvCpuMsPerTurn).padStart(10)}${x(r.srvCpuMsPerTurn, base.srvCpuMsPerTurn).padStart(6)}${String(r.srvCpuMsPerTurnMinusIdle).padStart(12)}${x(r.srvCpuMsPerTurnMinusIdle, base.srvCpuMsPerTurnMinusIdle).padStart(6)}${String(r.benchProcCpuMsPerTurn).padStart(12)}  ${r.subsComplete || '-'}`
    );
  }
  console.log('\nworker WARN/ERROR log lines (counted, suppressed):');
  for (const [k, v] of Object.entries(warnCounts)) console.log(`  ${v} x ${k}`);
  console.log(`\nend loadavg=${os.loadavg().map((x) => x.toFixed(2)).join('/')} total ${((Date.now() - t0) / 1000).toFixed(0)}s`);

  const tS = Date.now();
  worker.shutdown();
  const wOk = await Promise.race([workerRun.then(() => true, () => true), sleep(10000).then(() => false)]);
  await connection.close().catch(() => {});
  await subConnection.close().catch(() => {});
  stopServer();
  const sOk = await Promise.race([
    new Promise((r) => (srv.exitCode !== null || srv.signalCode !== null ? r(true) : srv.once('exit', () => r(true)))),
    sleep(10000).then(() => false),
  ]);
  console.log(`shutdown: worker ${wOk ? 'stopped' : 'did NOT stop within 10s'}, server ${sOk ? 'exited' : 'did NOT exit within 10s'} (${Date.now() - tS} ms)`);
  if (!sOk) { try { srv.kill('SIGKILL'); } catch {} }
  process.exit(0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
