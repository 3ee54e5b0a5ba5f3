/**
 * Why the pool exists: the median latency of an `echo` call through one pooled stdio connection to
 * server-everything, versus spawning a server per call (what session-per-call clients do), plus 50
 * concurrent calls through the one pooled connection. Prints the ratio (target: pooled ≥ 50×).
 *
 *   npm run bench:mcp
 */
import { McpPool, parseConfig } from '../src/mcp';

const POOLED_CALLS = 200;
const SPAWNED_CALLS = Number(process.env.BENCH_SPAWNS ?? 20);
const CONCURRENT = 50;

const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const servers = parseConfig(
  JSON.stringify({ mcp_servers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } }),
  'json',
  process.env,
  'bench',
).servers;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const call = (pool: McpPool, i: number) => pool.callTool({ server: 'everything', tool: 'echo', arguments: { message: `m${i}` }, toolUseId: `b${i}` });

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

  const spawned: number[] = [];
  for (let i = 0; i < SPAWNED_CALLS; i++) {
    const t = performance.now();
    const fresh = new McpPool(servers);
    await call(fresh, i);
    await fresh.close();
    spawned.push(performance.now() - t);
  }

  console.log(`\nMCP echo latency, server-everything over stdio (median)`);
  console.log(`  pooled connection:   ${median(pooled).toFixed(2)} ms per call (${POOLED_CALLS} sequential calls, ${spawnedBefore} process spawned)`);
  console.log(`  spawn per call:      ${median(spawned).toFixed(1)} ms per call (${SPAWNED_CALLS} calls, each spawn + initialize + call + shutdown)`);
  console.log(`  ratio:               pooled is ${(median(spawned) / median(pooled)).toFixed(0)}× faster (target ≥ 50×)`);
  console.log(`  ${CONCURRENT} concurrent calls through one connection: ${concurrentWall.toFixed(1)} ms wall, ${median(concurrent).toFixed(1)} ms median per call`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
