/**
 * What durability costs. Runs the same tool loop two ways against the same stub and the same pooled
 * server-everything: as the chatTurn workflow on a local dev server, and in-process (the same
 * activity functions called directly, in a mock activity context). Prints the median added time per
 * tool round at 0 ms and 200 ms stub latency, a round of a tool written in code against a round of the
 * same tool on an MCP server (stdio), and the history size of turns of 1, 5, 20 and 100 steps with a
 * quadratic fit (its s² term says whether history grows faster than the steps).
 *
 *   npm run bench:turns
 */
import { Client, Connection } from '@temporalio/client';
import { clientStorageOptions } from '../src/data-converter/client-storage-options';
import { MockActivityEnvironment } from '@temporalio/testing';
import { NativeConnection, Runtime, DefaultLogger, Worker, bundleWorkflowCode } from '@temporalio/worker';
import { startStubModel, type Scenario } from '../src/stub';
import { makeToolCallActivities } from '../activities/tool-calls';
import { CodeTools } from '../src/tools/code-tools';
import { Toolbox } from '../src/tools/toolbox';
import { defineTool } from '../src/tools/define-tool';
import { callClaude } from '../src/claude/call-claude';
import { createClaudeClient } from '../src/claude/client';
import { resolveClaudeConfig } from '../src/claude/config';
import { createTurnWorkers } from '../src/worker/turn-worker';
import { workflowsPath } from '../src/worker/workflows-path';
import { quietBundlerLogger } from '../src/worker/workflow-bundle';
import { freePort, startDevServer } from '../src/temporal/dev-server';
import { executeChatTurn, startChatTurn } from '../src/client/chat-turn-client';
import { buildToolCatalog } from '../src/core/tool-naming';
import { toolResultsMessage, toolUses } from '../src/core/transcript';
import type { MessageParam } from '../src/core/contracts';
import { hopTimes } from './hop-times';
import { everythingPool } from './everything-config';
import { testTemporalCli } from '../test/support/temporal-cli';
import { testDataConverter } from '../test/support/settings';

const ROUNDS = 5;
const TURNS = Number(process.env.BENCH_TURNS ?? 8);

/** The same echo as server-everything's, written in code (module `code`: Claude sees `code__echo`). */
const CODE_ECHO = defineTool({
  name: 'echo',
  description: 'Echoes back the input',
  inputSchema: { type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] },
  execute: ({ message }) => `Echo: ${String(message)}`,
});

function scenario(rounds: number, latencyMs: number, tool = 'everything__echo'): Scenario {
  return {
    latencyMs,
    steps: [
      ...Array.from({ length: rounds }, (_, i) => ({
        content: [{ type: 'tool_use' as const, name: tool, input: { message: `round ${i}` } }],
      })),
      { content: [{ type: 'text' as const, text: 'done: {{lastToolResult}}' }] },
    ],
    formatter: { conversation: [{ type: 'text', content: 'done' }] },
  };
}

/** Least-squares [a, b, c] of y = a + b·x + c·x² through the points (normal equations, Cramer's rule). */
function quadraticFit(points: Array<[number, number]>): [number, number, number] {
  const sum = (f: (x: number, y: number) => number): number => points.reduce((t, [x, y]) => t + f(x, y), 0);
  const [n, sx, sx2, sx3, sx4] = [0, 1, 2, 3, 4].map((k) => sum((x) => x ** k)) as [number, number, number, number, number];
  const [sy, sxy, sx2y] = [0, 1, 2].map((k) => sum((x, y) => x ** k * y)) as [number, number, number];
  const det3 = (m: number[][]): number =>
    m[0]![0]! * (m[1]![1]! * m[2]![2]! - m[1]![2]! * m[2]![1]!) -
    m[0]![1]! * (m[1]![0]! * m[2]![2]! - m[1]![2]! * m[2]![0]!) +
    m[0]![2]! * (m[1]![0]! * m[2]![1]! - m[1]![1]! * m[2]![0]!);
  const m = [
    [n, sx, sx2],
    [sx, sx2, sx3],
    [sx2, sx3, sx4],
  ];
  const rhs = [sy, sxy, sx2y];
  const d = det3(m);
  const solve = (col: number): number => det3(m.map((row, i) => row.map((v, j) => (j === col ? rhs[i]! : v)))) / d;
  return [solve(0), solve(1), solve(2)];
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const server = await startDevServer({ cliPath: testTemporalCli().path, port: await freePort(), uiPort: await freePort() });
  const scenarios: Record<string, Scenario> = {
    'lat-0': scenario(ROUNDS, 0),
    'lat-200': scenario(ROUNDS, 200),
    'code-0': scenario(ROUNDS, 0, 'code__echo'),
    'steps-1': scenario(0, 0),
    'steps-5': scenario(4, 0),
    'steps-20': scenario(19, 0),
    'steps-100': scenario(99, 0),
  };
  const stub = await startStubModel({ scenarios });
  const pool = everythingPool();
  const claudeClient = createClaudeClient({ apiKey: 'bench', baseURL: stub.url });
  const claudeConfig = resolveClaudeConfig({});
  const connection = await NativeConnection.connect({ address: server.address });
  const bundle = await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: quietBundlerLogger });
  const taskQueue = 'bench-overhead';
  // The workers and both clients share one converter.
  const dataConverter = testDataConverter();
  const codeTools = new CodeTools([], { code: [CODE_ECHO] });
  const workers = await createTurnWorkers({ connection, taskQueue, pool, codeTools, claudeClient, claudeConfig, workflowBundle: bundle, dataConverter });
  const running = workers.run();
  const client = new Client({ connection: await Connection.connect({ address: server.address }), ...clientStorageOptions(dataConverter) });
  // Turns start as `run` starts them with its in-process worker: on the worker's connection, eagerly.
  const workerClient = new Client({ connection, ...clientStorageOptions(dataConverter) });
  const eager = { taskQueue, eagerStart: true };

  // The in-process loop: the same Claude edge and MCP activity, the same transcript rules, no Temporal.
  const mcp = makeToolCallActivities(pool);
  async function inProcess(model: string, question: string): Promise<void> {
    // A fresh mock context per turn, as Temporal gives each activity its own: one shared context's
    // cancellation signal would collect an abort listener per call (MaxListenersExceededWarning).
    const env = new MockActivityEnvironment();
    const listed = await pool.listTools();
    const catalog = buildToolCatalog(listed.tools, {}, 15);
    const messages: MessageParam[] = [{ role: 'user', content: question }];
    for (let step = 1; step <= 50; step++) {
      const reply = await callClaude(claudeClient, { model, messages, tools: catalog.tools, maxTokens: 4096 }, { cache: claudeConfig.promptCaching });
      messages.push({ role: 'assistant', content: reply.content });
      const uses = toolUses(reply.content);
      if (!uses.length) return;
      const results = await Promise.all(
        uses.map(async (u) => {
          const t = catalog.targets[u.name]!;
          const out = (await env.run(mcp.callTool, { server: t.server, tool: t.tool, arguments: u.input as Record<string, unknown>, toolUseId: u.id })) as Awaited<ReturnType<typeof mcp.callTool>>;
          return { toolUseId: u.id, content: out.content, isError: out.isError };
        }),
      );
      messages.push(toolResultsMessage(results));
    }
  }

  // Warm up both paths (workflow cache, pool connection, stub).
  await executeChatTurn(workerClient, { question: 'warm', model: 'lat-0', format: false, maxSteps: 20 }, eager);
  await inProcess('lat-0', 'warm');

  console.log(`\nOverhead per tool round: ${ROUNDS} rounds per turn, ${TURNS} turns each way, median`);
  for (const model of ['lat-0', 'lat-200']) {
    const wf: number[] = [];
    const ip: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      let t = performance.now();
      await executeChatTurn(workerClient, { question: `wf ${model} ${i}`, model, format: false, maxSteps: 20 }, eager);
      wf.push(performance.now() - t);
      t = performance.now();
      await inProcess(model, `ip ${model} ${i}`);
      ip.push(performance.now() - t);
    }
    const added = (median(wf) - median(ip)) / (ROUNDS + 1);
    console.log(
      `  stub latency ${model.slice(4).padStart(3)} ms: workflow ${median(wf).toFixed(1)} ms/turn, in-process ${median(ip).toFixed(1)} ms/turn ` +
        `→ ${added.toFixed(1)} ms added per round (target ≤ 10 ms)`,
    );
  }

  // A round of a tool written in code against the same round on the MCP server: no process hop.
  await executeChatTurn(workerClient, { question: 'warm code', model: 'code-0', format: false, maxSteps: 20 }, eager);
  const byKind: Record<'mcp' | 'code', { turns: number[]; calls: number[] }> = { mcp: { turns: [], calls: [] }, code: { turns: [], calls: [] } };
  for (let i = 0; i < TURNS; i++) {
    for (const [kind, model] of [['mcp', 'lat-0'], ['code', 'code-0']] as const) {
      const t = performance.now();
      const result = await executeChatTurn(workerClient, { question: `${kind} ${i}`, model, format: false, maxSteps: 20 }, eager);
      byKind[kind].turns.push(performance.now() - t);
      byKind[kind].calls.push(...result.toolCalls.map((c) => c.durationMs));
    }
  }
  // The call alone, in this process: the same echo through the toolbox, 200 calls each, timed one by one.
  const toolbox = new Toolbox(pool, codeTools);
  const callMicros = async (server: string): Promise<number> => {
    const times: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      await toolbox.callTool({ server, tool: 'echo', arguments: { message: `call ${i}` }, toolUseId: `bench-${i}` }, { turnId: 'bench' });
      times.push((performance.now() - t) * 1000);
    }
    return median(times);
  };
  const [codeCall, mcpCall] = [await callMicros('code'), await callMicros('everything')];
  const perRound = (kind: 'mcp' | 'code'): number => median(byKind[kind].turns) / (ROUNDS + 1);
  console.log(
    `  a code tool round against an MCP tool round (0 ms stub, ${TURNS} turns of ${ROUNDS} rounds each): ` +
      `${perRound('code').toFixed(1)} vs ${perRound('mcp').toFixed(1)} ms per round (${(perRound('code') / perRound('mcp')).toFixed(2)}×); ` +
      `the call itself, by the worker's clock: median ${median(byKind.code.calls).toFixed(2)} vs ${median(byKind.mcp.calls).toFixed(2)} ms; ` +
      `alone in this process (200 calls each): median ${codeCall.toFixed(0)} vs ${mcpCall.toFixed(0)} µs (${(codeCall / mcpCall).toFixed(2)}×)`,
  );

  // Temporal's own floor for the same hops: no-op activities, nothing else.
  const floorBundle = await bundleWorkflowCode({ workflowsPath: require.resolve('./floor-workflow'), logger: quietBundlerLogger });
  const noop = { async noop(): Promise<void> {} };
  const floorWorkers = await Promise.all(
    ['bench-floor', 'bench-floor-other'].map((queue) =>
      Worker.create({ connection, taskQueue: queue, activities: noop, ...(queue === 'bench-floor' ? { workflowBundle: floorBundle } : {}) }),
    ),
  );
  const floorRunning = Promise.all(floorWorkers.map((w) => w.run()));
  /** Median ms per round of `TURNS` runs of a floor workflow (after one that warms the cache), and the last run's hops. */
  async function floorOf(workflowType: string, args: unknown[]): Promise<{ perRound: number; hops: string[] }> {
    const times: number[] = [];
    let hops: string[] = [];
    for (let i = 0; i < TURNS + 1; i++) {
      const t = performance.now();
      const handle = await client.workflow.start(workflowType, { taskQueue: 'bench-floor', workflowId: `${workflowType}-${Date.now()}-${i}`, args });
      await handle.result();
      if (i > 0) times.push(performance.now() - t);
      if (i === TURNS) hops = hopTimes(await handle.fetchHistory());
    }
    return { perRound: median(times) / ROUNDS, hops };
  }
  const twoHops = await floorOf('floorRounds', [ROUNDS, 'bench-floor-other']);
  const localThenEager = await floorOf('floorLocalRounds', [ROUNDS]);
  const floorHops = twoHops.hops;
  for (const w of floorWorkers) w.shutdown();
  await floorRunning;
  console.log(
    `  Temporal's floor on this server: ${twoHops.perRound.toFixed(1)} ms per round of two hops (an activity on a second queue, then one on ` +
      `the workflow's own) with no-op activities and no work in the workflow; ${localThenEager.perRound.toFixed(1)} ms for a round of ` +
      `today's shape (a local activity, then an eagerly dispatched one)`,
  );

  // Where the added time goes, from the event timestamps of one more 0 ms turn.
  const traced = await startChatTurn(client, { question: 'traced', model: 'lat-0', format: false, maxSteps: 20 }, { taskQueue });
  await traced.result();
  console.log('\nWhere a round\'s time goes (one 0 ms turn, median per hop, from event timestamps)');
  for (const line of hopTimes(await traced.fetchHistory())) console.log(`  ${line}`);
  console.log('  and in the floor workflow:');
  for (const line of floorHops) console.log(`  ${line}`);

  console.log('\nHistory size by steps (format: false)');
  const sizes: Array<[number, number]> = [];
  for (const [model, steps] of [['steps-1', 1], ['steps-5', 5], ['steps-20', 20], ['steps-100', 100]] as const) {
    const handle = await startChatTurn(client, { question: `history ${steps}`, model, format: false, maxSteps: 100 }, { taskQueue });
    await handle.result();
    const history = await handle.fetchHistory();
    const bytes = Buffer.byteLength(JSON.stringify(history));
    sizes.push([steps, bytes]);
    console.log(`  ${String(steps).padStart(2)} steps: ${(bytes / 1024).toFixed(1)} KiB, ${history.events?.length} events, ${(bytes / steps / 1024).toFixed(1)} KiB/step`);
  }
  const slopes = sizes.slice(1).map(([s, b], i) => `${((b - sizes[i]![1]) / (s - sizes[i]![0]) / 1024).toFixed(2)} KiB (${sizes[i]![0]}→${s})`);
  console.log(`  bytes per added step: ${slopes.join(', ')} (target ≤ 6 KiB each)`);
  const [a, b, c] = quadraticFit(sizes);
  const [s100, b100] = sizes[sizes.length - 1]!;
  console.log(
    `  least-squares fit bytes = a + b·s + c·s²: a ${(a / 1024).toFixed(1)} KiB, b ${(b / 1024).toFixed(2)} KiB, c ${c.toFixed(2)} B ` +
      `(c·s² at ${s100} steps is ${((100 * c * s100 * s100) / b100).toFixed(1)} % of the history)`,
  );

  workers.shutdown();
  await running;
  await pool.close();
  await stub.close();
  await client.connection.close();
  await connection.close();
  await server.stop();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
