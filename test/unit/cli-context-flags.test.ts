/**
 * `--toolset NAME` and `--context key=value` on `run`, `chat` and `batch`: parsed as a user types
 * them, each value a string, a bad form one line naming the flag and the fix (exit 2, nothing
 * started); on `batch` they are every line's defaults, a line's own toolset and context keys winning.
 */
import { flagsOf, parse } from '../support/cli-program';
import { CliError } from '../../src/cli/cli-error';
import { batchCommand } from '../../src/cli/commands/batch';
import { chatCommand } from '../../src/cli/commands/chat';
import { runCommand } from '../../src/cli/commands/run';
import { batchDefaultsOf, turnOptionsOf, type TurnFlags } from '../../src/cli/turn-flags';
import { parseBatchLines } from '../../src/schemas/batch-lines';

describe('run and chat', () => {
  it('--context repeats, each value a string split at its first =; key= is an empty string; --toolset names a tool set', async () => {
    const flags = await flagsOf<TurnFlags>(runCommand(), 'q', '--toolset', 'research', '--context', 'tenant=acme', '--context', 'empty=', '--context=filter=a=b', '--context', 'n=42');
    expect(turnOptionsOf(flags)).toEqual({ stream: true, toolset: 'research', context: { tenant: 'acme', empty: '', filter: 'a=b', n: '42' } });
    const chat = await flagsOf<TurnFlags>(chatCommand(), '--context', 'user=me', '--context', 'user=you');
    expect(turnOptionsOf(chat)).toEqual({ stream: true, context: { user: 'you' } }); // the last value of a key
    expect(turnOptionsOf(await flagsOf<TurnFlags>(runCommand(), 'q'))).toEqual({ stream: true }); // neither given: neither set
  });

  it('refuses a pair without =, a key outside the rule and a bad toolset name: one line naming the flag, exit 2', async () => {
    expect(await parse('run', 'hi', '--context', 'novalue')).toEqual(
      new CliError('--context "novalue" has no value: write --context key=value (key= for an empty value)', 2),
    );
    expect(await parse('chat', '--context', 'bad key=x')).toMatchObject({
      exitCode: 2,
      message: '--context "bad key=x": context keys are 1-64 characters of A-Z a-z 0-9 _ -, got "bad key"',
    });
    expect(await parse('run', 'hi', '--context', '=x')).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^--context "=x": context keys are /) });
    expect(await parse('run', 'hi', '--context', `${'k'.repeat(65)}=x`)).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^--context "k+=x": context keys are 1-64 characters/) });
    expect(await parse('run', 'hi', '--context', `big=${'x'.repeat(17_000)}`)).toMatchObject({ exitCode: 2, message: 'invalid turn options: context: at most 16384 bytes of JSON' });
    expect(await parse('run', 'hi', '--toolset', 'no such/set')).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^invalid turn options: toolset: a toolset name: /) });
    expect(await parse('run', 'hi', '--context', '--json')).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^--context needs a value, and the next word is the flag --json/) });
  });
});

describe('batch', () => {
  const lines = [
    JSON.stringify({ id: 'plain', question: 'q1' }),
    JSON.stringify({ id: 'own', question: 'q2', toolset: 'support', context: { tenant: 'line', user: 'u1' } }),
    JSON.stringify({ id: 'deep', question: 'q3', context: { nested: { a: [1, 2] } } }),
  ].join('\n');

  it("the flags are every line's defaults: a line's own toolset wins, its context keys win key by key", async () => {
    const flags = await flagsOf<Parameters<typeof batchDefaultsOf>[0]>(batchCommand(), 'q.jsonl', '--toolset', 'research', '--context', 'tenant=acme', '--context', 'region=eu', '--model', 'm1');
    const defaults = batchDefaultsOf(flags);
    expect(defaults).toEqual({ model: 'm1', toolset: 'research', context: { tenant: 'acme', region: 'eu' } });
    const { items, problems } = parseBatchLines(lines, defaults);
    expect(problems).toEqual([]);
    expect(Object.fromEntries(items.map((i) => [i.id, i.input]))).toEqual({
      plain: { question: 'q1', model: 'm1', toolset: 'research', context: { tenant: 'acme', region: 'eu' } },
      own: { question: 'q2', model: 'm1', toolset: 'support', context: { tenant: 'line', region: 'eu', user: 'u1' } },
      deep: { question: 'q3', model: 'm1', toolset: 'research', context: { tenant: 'acme', region: 'eu', nested: { a: [1, 2] } } },
    });
    // Without the flags, the lines are as they are.
    expect(parseBatchLines(lines).items.map((i) => i.input)).toEqual(lines.split('\n').map((l) => {
      const { id: _id, ...input } = JSON.parse(l) as Record<string, unknown>;
      return input;
    }));
  });

  it('a line is checked with the defaults under it; a context that is not an object stays the line\'s own to refuse', () => {
    const defaults = { context: { pad: 'x'.repeat(16_000) } };
    const { items, problems } = parseBatchLines(
      [JSON.stringify({ id: 'fits', question: 'q' }), JSON.stringify({ id: 'over', question: 'q', context: { more: 'y'.repeat(1_000) } }), JSON.stringify({ id: 'bad', question: 'q', context: ['x'] })].join('\n'),
      defaults,
    );
    expect(items.map((i) => i.id)).toEqual(['fits']);
    expect(problems).toEqual([
      { line: 2, message: 'context: at most 16384 bytes of JSON' },
      { line: 3, message: expect.stringMatching(/^context: /) },
    ]);
  });

  it('refuses a bad --context before the file is read, naming the flag, exit 2', async () => {
    expect(await parse('batch', 'no-such-file.jsonl', '--context', 'tenant')).toMatchObject({
      exitCode: 2,
      message: '--context "tenant" has no value: write --context key=value (key= for an empty value)',
    });
  });
});
