/**
 * `McpPool.close()` resolves, and the stdio server's whole process group is ended, when the server
 * leaves a process behind in its group that holds none of its pipes: in a process of its own, where
 * nothing else keeps Node's event loop alive (a pending close must, or the process exits without
 * close() ever resolving). Against server-everything from npm (legacy era only: it is built on the
 * v1 SDK) and our counting fixture in each protocol era.
 */
import path from 'node:path';
import os from 'node:os';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { EVERYTHING, processTable, sleep } from './mcp-fixtures';
import { COUNTING, MCP_ERAS, countingStdio, type McpEra } from '../support/mcp-servers';

jest.setTimeout(30_000);

const ROOT = path.resolve(__dirname, '..', '..');

/** Runs `script` in a new node process that can require the project's TypeScript. */
function runNode(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', path.join(ROOT, 'test/support/swc-register.js'), '-e', script],
      { cwd: ROOT, timeout: 20_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

/**
 * Lists the tools of `server` in a process of its own (expecting `tools` of them, in `era`), says
 * whether the process marked `marker` is running, closes the pool, and checks that it is gone.
 */
async function closesLeavingNothing(
  server: Record<string, unknown>,
  marker: string,
  expected: { tools: number; era: McpEra },
): Promise<void> {
  const config = JSON.stringify({ mcp_servers: { e: server } });
  const script = `
    const { McpPool } = require('./src/mcp');
    const { parseConfig } = require('./src/config/config-file');
    (async () => {
      const pool = new McpPool(parseConfig(${JSON.stringify(config)}, 'json', process.env, 'test').servers);
      const listed = await pool.listTools();
      console.log('listed ' + listed.tools.length + ' tools in the ' + pool.status()[0].era + ' era');
      const left = require('node:child_process').execFileSync('ps', ['-eo', 'args=']).toString().includes(${JSON.stringify(marker)});
      console.log('left-behind child running: ' + left);
      await pool.close();
      console.log('closed');
    })().catch((err) => { console.error(err); process.exit(1); });
  `;
  const run = await runNode(script);
  expect(run.stderr).toBe('');
  expect(run.stdout).toBe(
    `listed ${expected.tools} tools in the ${expected.era} era\nleft-behind child running: true\nclosed\n`,
  );
  expect(run.code).toBe(0);
  for (let i = 0; i < 20 && processTable().some((p) => p.args.includes(marker)); i++) await sleep(50);
  expect(processTable().filter((p) => p.args.includes(marker))).toEqual([]);
}

/** A shell that starts a child in its own process group, its stdio detached from the server's pipes, then becomes `server`. */
const leavingAChild = (marker: string, server: string): string =>
  `node -e 'setInterval(() => {}, 1000)' ${marker} </dev/null >/dev/null 2>&1 & exec node ${server}`;

it.concurrent(
  'resolves close() and ends the group when server-everything leaves a child behind (legacy era)',
  async () => {
    const marker = `left-behind-${randomUUID()}`;
    await closesLeavingNothing(
      { command: 'sh', args: ['-c', leavingAChild(marker, `${EVERYTHING} stdio`)] },
      marker,
      {
        tools: 14, // its elicitation tools too: the client declares it can put questions to a person
        era: 'legacy',
      },
    );
  },
);

describe.each(MCP_ERAS)('our fixture (%s era)', (era) => {
  it.concurrent('resolves close() and ends the group when the server leaves a child behind', async () => {
    const marker = `left-behind-${randomUUID()}`;
    const counts = path.join(os.tmpdir(), `mcp-pool-close-${randomUUID()}.jsonl`);
    await closesLeavingNothing(
      countingStdio(counts, { command: 'sh', args: ['-c', leavingAChild(marker, COUNTING)] }, era),
      marker,
      { tools: 3, era },
    );
  });
});
