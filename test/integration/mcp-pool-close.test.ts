/**
 * `McpPool.close()` resolves, and the stdio server's whole process group is ended, when the server
 * leaves a process behind in its group that holds none of its pipes: in a process of its own, where
 * nothing else keeps Node's event loop alive (a pending close must, or the process exits without
 * close() ever resolving).
 */
import path from 'node:path';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { EVERYTHING, processTable, sleep } from './mcp-fixtures';

jest.setTimeout(30_000);

const ROOT = path.resolve(__dirname, '..', '..');

/** Runs `script` in a new node process that can require the project's TypeScript. */
function runNode(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['-r', path.join(ROOT, 'test/support/swc-register.js'), '-e', script],
      { cwd: ROOT, timeout: 20_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });
}

it('resolves close() and ends the group when the server leaves a child behind', async () => {
  const marker = `left-behind-${randomUUID()}`;
  // The shell starts a child in the server's process group with its stdio detached from the
  // server's pipes, then becomes server-everything.
  const command = `node -e 'setInterval(() => {}, 1000)' ${marker} </dev/null >/dev/null 2>&1 & exec node ${EVERYTHING} stdio`;
  const config = JSON.stringify({ mcp_servers: { e: { command: 'sh', args: ['-c', command] } } });
  const script = `
    const { McpPool } = require('./src/mcp');
    const { parseConfig } = require('./src/config/config-file');
    (async () => {
      const pool = new McpPool(parseConfig(${JSON.stringify(config)}, 'json', process.env, 'test').servers);
      const listed = await pool.listTools();
      console.log('listed ' + listed.tools.length + ' tools');
      const left = require('node:child_process').execFileSync('ps', ['-eo', 'args=']).toString().includes(${JSON.stringify(marker)});
      console.log('left-behind child running: ' + left);
      await pool.close();
      console.log('closed');
    })().catch((err) => { console.error(err); process.exit(1); });
  `;
  const run = await runNode(script);
  expect(run.stderr).toBe('');
  // server-everything offers its elicitation tools too: the client declares it can put questions to a person.
  expect(run.stdout).toBe('listed 14 tools\nleft-behind child running: true\nclosed\n');
  expect(run.code).toBe(0);
  for (let i = 0; i < 20 && processTable().some((p) => p.args.includes(marker)); i++) await sleep(50);
  expect(processTable().filter((p) => p.args.includes(marker))).toEqual([]);
});
