/**
 * Why the pool exists: the median latency of an `echo` call through one pooled stdio connection to
 * server-everything, versus spawning a server per call (what session-per-call clients do), plus 50
 * concurrent calls through the one pooled connection. Prints the ratio (target: pooled ≥ 50×).
 *
 *   npm run bench:mcp
 */
import { McpPool } from '../src/mcp';
import { parseConfig } from '../src/config/config-file';
import { testStateDir } from '../test/support/settings';

const POOLED_CALLS = 200;
const SPAWNED_CALLS = Number(process.env.BENCH_SPAWNS ?? 20);
const CONCURRENT = 50;

const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const servers = parseConfig(
  JSON.stringify({ mcp_servers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } }),
  'json',
  process.env,
  'bench',
  testStateDir(),
).servers;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
/**
 * One echo call, checked: the pool answers failures (open circuit, dead server) as `isError` results
 * without throwing, and those come back fast, so an unchecked bench could time errors as successes.
 */
async function call(pool: McpPool, i: number): Promise<void> {
  const out = await pool.callTool({
    server: 'everything',
    tool: 'echo',
    arguments: { message: `m${i}` },
    toolUseId: `b${i}`,
  });
  const text = out.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
  if (out.isError || text !== `Echo: m${i}`)
    throw new Error(`echo m${i} answered ${out.isError ? 'an error' : 'unexpectedly'}: ${text}`);
}

async function main(): Promise<void> {
  const pool = new McpPool(servers);
  await call(pool, -1); // connect once; the pool's whole point is not paying this again
  const pooled: number[] = [];
  for (let i = 0; i < POOLED_CALLS; i++) {
    const t = performance.now();
    await call(pool, i);
    pooled.push(performance.now() - t);
  }
  const t0 = performance.now();
  const concurrent = await Promise.all(
    Array.from({ length: CONCURRENT }, async (_, i) => {
      const t = performance.now();
      await call(pool, 1000 + i);
      return performance.now() - t;
    }),
  );
  const concurrentWall = performance.now() - t0;
  const spawnedBefore = pool.status()[0]!.spawned;
  await pool.close();

  // Session-per-call: what each call costs without a pool. Timed to the answer (spawn + initialize +
  // call) and, separately, with the shutdown a client must also pay before the next call.
  const spawned: number[] = [];
  const withShutdown: number[] = [];
  for (let i = 0; i < SPAWNED_CALLS; i++) {
    const t = performance.now();
    const fresh = new McpPool(servers);
    await call(fresh, i);
    spawned.push(performance.now() - t);
    await fresh.close();
    withShutdown.push(performance.now() - t);
  }

  const ratio = median(spawned) / median(pooled);
  console.log(`\nMCP echo latency, server-everything over stdio (median)`);
  console.log(
    `  pooled connection:   ${median(pooled).toFixed(2)} ms per call (${POOLED_CALLS} sequential calls, ${spawnedBefore} process spawned)`,
  );
  console.log(
    `  spawn per call:      ${median(spawned).toFixed(1)} ms to the answer (spawn + initialize + call), ` +
      `${median(withShutdown).toFixed(1)} ms with the process-group shutdown (${SPAWNED_CALLS} calls, fewer than ${POOLED_CALLS} because each costs a process)`,
  );
  console.log(
    `  ratio:               pooled is ${ratio.toFixed(0)}× faster to the answer (target ≥ 50×: ${ratio >= 50 ? 'met' : 'NOT met'})`,
  );
  console.log(
    `  ${CONCURRENT} concurrent calls through one connection: ${concurrentWall.toFixed(1)} ms wall, ${median(concurrent).toFixed(1)} ms median per call`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
