/**
 * A flag that takes a value never takes the next flag: the real command line, parsed as a user
 * types it, refused before any command acts (no server is looked for).
 */
import { buildProgram } from '../../src/cli/main';
import { CliError } from '../../src/cli/cli-error';

async function parse(...args: string[]): Promise<unknown> {
  const argv = ['node', 'mcp-turns', ...args];
  return buildProgram(argv).parseAsync(argv).then(() => undefined, (err: unknown) => err);
}

it('refuses a flag taken as the value of the flag before it, naming both, exit 2', async () => {
  const denied = await parse('run', 'hi', '--deny', '--config', 'mcp.json');
  expect(denied).toBeInstanceOf(CliError);
  expect(denied).toMatchObject({
    exitCode: 2,
    message: '--deny needs a value, and the next word is the flag --config: give --deny its value first (or write --deny=--config if that is the value)',
  });
  expect(await parse('batch', 'q.jsonl', '--out', '--concurrency=4')).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^--out needs a value, and the next word is the flag --concurrency: /) });
  expect(await parse('--state-dir', '--help', 'ls')).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^--state-dir needs a value, and the next word is the flag --help/) });
  expect(await parse('show', 'turn-1', '--address', '--json')).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^--address needs a value, and the next word is the flag --json/) });
});
