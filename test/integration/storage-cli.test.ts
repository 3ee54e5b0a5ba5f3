/** The CLI and the storage setting: the worker says where payloads go; a bad setting is one line, exit 2. */
import { runCli, startCli } from '../support/cli';
import { uniqueQueue } from '../support/temporal';

jest.setTimeout(60_000);

const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
const BAD = 'mcp-turns: MCP_TURNS_STORAGE must be fs, fs:DIR, s3://BUCKET[/PREFIX]?endpoint=URL or none, got "gcs://bucket"';

it('mcp-turns worker names its payload store in its start line', async () => {
  const worker = await startCli(['worker', '--address', address, '--task-queue', uniqueQueue('storage-cli'), '--log-level', 'WARN'], /mcp-turns worker on/, {
    env: { ANTHROPIC_API_KEY: 'test', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
  });
  try {
    expect(worker.output()).toContain(
      `payload storage: files in ${process.env.MCP_TURNS_TEST_PAYLOAD_DIR} (payloads from 256.0 KiB, transcript segments from 256 B, what a conversation keeps from 16.0 KiB)`,
    );
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
  }
});

it.each([
  ['worker', ['worker', '--address', address]],
  ['run', ['run', 'hello', '--address', address, '--no-wait']],
])('mcp-turns %s with a bad MCP_TURNS_STORAGE: one line, exit 2', async (_name, args) => {
  const run = await runCli(args, { env: { MCP_TURNS_STORAGE: 'gcs://bucket', ANTHROPIC_API_KEY: 'test' } });
  expect(run.code).toBe(2);
  expect(run.stderr.trim()).toBe(BAD);
});
