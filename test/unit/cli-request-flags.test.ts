/**
 * The request controls' flags on `run`, `chat` and `batch`: `--output-schema`, `--effort`,
 * `--stop-sequence`, `--tool-choice`, `--tool-choice-every`, `--cache-ttl`, `--user-id`, mapped to
 * the turn's input by the one mapping; a bad one is one line naming the flag (exit 2, nothing
 * started), and `--temperature`, `--top-p` and `--top-k` are refused so. On `batch` they are every
 * line's defaults, a line's own field winning.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { flagsOf, parse } from '../support/cli-program';
import { CliError } from '../../src/cli/cli-error';
import { batchCommand } from '../../src/cli/commands/batch';
import { chatCommand } from '../../src/cli/commands/chat';
import { runCommand } from '../../src/cli/commands/run';
import { batchDefaultsOf, outputSpecOf, turnOptionsOf, type TurnFlags } from '../../src/cli/turn-flags';
import { LEGACY_SAMPLING_MESSAGE } from '../../src/core/request-controls';
import { parseBatchLines } from '../../src/schemas/batch-lines';

/** The turn options `run` gets from `args`, or the error it stops with. */
async function runOptions(...args: string[]): Promise<unknown> {
  const flags = await flagsOf<TurnFlags>(runCommand(), 'q', ...args);
  try {
    return turnOptionsOf(flags);
  } catch (err) {
    return err;
  }
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'request-flags-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A file in the test's directory holding `text` (JSON for anything else). */
function file(name: string, content: unknown): string {
  const at = path.join(dir, name);
  fs.writeFileSync(at, typeof content === 'string' ? content : JSON.stringify(content));
  return at;
}

const invoice = { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] };

describe('run and chat', () => {
  it('each flag sets its field of the turn input, only when given', async () => {
    expect(
      await runOptions('--effort', 'high', '--stop-sequence', '###', '--stop-sequence', 'END', '--tool-choice', 'any', '--cache-ttl', '1h', '--user-id', 'u-123'),
    ).toEqual({ stream: true, effort: 'high', stopSequences: ['###', 'END'], toolChoice: 'any', cache: { ttl: '1h' }, userId: 'u-123' });
    expect(await runOptions('--tool-choice', 'files__read_file')).toEqual({ stream: true, toolChoice: 'files__read_file' });
    expect(await runOptions()).toEqual({ stream: true });
    // A stop sequence is taken as written: its whitespace too.
    expect(await runOptions('--stop-sequence', '\n\nEND')).toEqual({ stream: true, stopSequences: ['\n\nEND'] });
    const chat = await flagsOf<TurnFlags>(chatCommand(), '--effort', 'low', '--tool-choice', 'none', '--cache-ttl', '5m');
    expect(turnOptionsOf(chat)).toEqual({ stream: true, effort: 'low', toolChoice: 'none', cache: { ttl: '5m' } });
  });

  it('--tool-choice-every makes the choice hold for every call; alone it is one line naming what it goes with', async () => {
    expect(await runOptions('--tool-choice', 'files__read_file', '--tool-choice-every')).toEqual({
      stream: true,
      toolChoice: { type: 'tool', name: 'files__read_file', on: 'every' },
    });
    expect(await runOptions('--tool-choice', 'any', '--tool-choice-every')).toEqual({ stream: true, toolChoice: { type: 'any', on: 'every' } });
    expect(await runOptions('--tool-choice-every')).toEqual(
      new CliError('--tool-choice-every goes with --tool-choice <auto|any|none|server__tool>: the choice that holds for every call', 2),
    );
  });

  it('--output-schema reads a JSON Schema, or {"schema", "name"?, "description"?}, into the turn\'s output', async () => {
    expect(await runOptions('--output-schema', file('bare.json', invoice))).toEqual({ stream: true, output: { schema: invoice } });
    const spec = { schema: invoice, name: 'invoice', description: 'the invoice total' };
    expect(await runOptions('--output-schema', file('spec.json', spec))).toEqual({ stream: true, output: spec });
    // A schema with a "type" at its top is a schema, even with a "schema" key.
    const withKey = { type: 'object', schema: { type: 'string' }, properties: {} };
    expect(outputSpecOf(file('with-key.json', withKey))).toEqual({ schema: withKey });
    // A "schema" that is not an object: the file is the schema.
    expect(outputSpecOf(file('not-spec.json', { schema: true }))).toEqual({ schema: { schema: true } });
    expect(() => outputSpecOf(file('list.json', [invoice]))).toThrow(
      new CliError(`--output-schema ${path.join(dir, 'list.json')}: holds an array: a JSON Schema is a JSON object (with "type": "object")`, 2),
    );
    expect(outputSpecOf(file('bom.json', `\uFEFF${JSON.stringify(invoice)}`))).toEqual({ schema: invoice });
  });

  it('a bad --output-schema is one line naming the flag and the file, exit 2', async () => {
    const missing = path.join(dir, 'missing.json');
    expect(await runOptions('--output-schema', missing)).toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(new RegExp(`^--output-schema ${missing}: cannot read it: ENOENT`)),
    });
    const bad = file('bad.json', '{"type": "object",');
    expect(await runOptions('--output-schema', bad)).toMatchObject({ exitCode: 2, message: expect.stringMatching(new RegExp(`^--output-schema ${bad}: not JSON: `)) });
    const array = file('array.json', { type: 'array', items: { type: 'string' } });
    expect(await runOptions('--output-schema', array)).toEqual(
      new CliError(`--output-schema ${array}: the answer is a JSON object: the schema needs "type": "object" at its root`, 2),
    );
    const broken = file('broken.json', { type: 'object', properties: { a: { type: 'no-such-type' } } });
    expect(await runOptions('--output-schema', broken)).toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(new RegExp(`^--output-schema ${broken}: not a valid JSON Schema 2020-12: `)),
    });
    const badName = file('bad-name.json', { schema: invoice, name: 'an invoice' });
    expect(await runOptions('--output-schema', badName)).toEqual(new CliError(`--output-schema ${badName}: name: 1-64 characters of A-Z a-z 0-9 _ -`, 2));
    const extra = file('extra.json', { schema: invoice, title: 'x' });
    expect(await runOptions('--output-schema', extra)).toEqual(new CliError(`--output-schema ${extra}: title: unknown key`, 2));
    // Through the real command line: refused before anything is started.
    expect(await parse('run', 'hi', '--output-schema', array)).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^--output-schema .*array\.json: the answer is a JSON object/) });
  });

  it('the schema refuses a bad value, and the line names the flag with its value', async () => {
    expect(await runOptions('--effort', 'extreme')).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^--effort "extreme": .*"xhigh"/) });
    expect(await runOptions('--cache-ttl', '1d')).toMatchObject({ exitCode: 2, message: expect.stringMatching(/^--cache-ttl "1d": .*"5m"/) });
    expect(await runOptions('--user-id', 'ana@example.com')).toEqual(
      new CliError('--user-id "ana@example.com": an opaque id (a uuid or a hash), not an e-mail address', 2),
    );
    expect(await runOptions('--stop-sequence', 'END', '--stop-sequence', ' \n')).toEqual(
      new CliError('--stop-sequence " \\n": a stop sequence must contain something other than whitespace', 2),
    );
    const many = Array.from({ length: 17 }, (_, i) => ['--stop-sequence', `s${i}`]).flat();
    expect(await runOptions(...many)).toEqual(new CliError('--stop-sequence: at most 16 stop sequences', 2));
    // A flag's problem and another field's, on one line.
    expect(await runOptions('--effort', 'extreme', '--toolset', 'no such/set')).toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/^--effort "extreme": .*; invalid turn options: toolset: a toolset name: /),
    });
  });

  it('--temperature, --top-p and --top-k are refused: one line naming the flag, exit 2, before anything is started', async () => {
    expect(await parse('run', 'hi', '--temperature', '0.2')).toEqual(new CliError(`--temperature: ${LEGACY_SAMPLING_MESSAGE}`, 2));
    expect(await parse('chat', '--top-k', '40')).toEqual(new CliError(`--top-k: ${LEGACY_SAMPLING_MESSAGE}`, 2));
    expect(await parse('run', 'hi', '--top-p', '0.9', '--temperature', '1')).toEqual(new CliError(`--temperature, --top-p: ${LEGACY_SAMPLING_MESSAGE}`, 2));
    // Before the batch's file is read.
    expect(await parse('batch', 'no-such-file.jsonl', '--temperature', '0')).toEqual(new CliError(`--temperature: ${LEGACY_SAMPLING_MESSAGE}`, 2));
  });

  it('every flag has its help', () => {
    for (const command of [runCommand(), chatCommand(), batchCommand()]) {
      const help = command.helpInformation();
      for (const flag of ['--output-schema <file>', '--effort <level>', '--stop-sequence <text>', '--tool-choice <choice>', '--tool-choice-every', '--cache-ttl <ttl>', '--user-id <id>', '--temperature <value>', '--top-p <value>', '--top-k <value>'])
        expect(help).toContain(flag);
    }
  });
});

describe('batch', () => {
  it("the flags are every line's defaults: a line's own field wins", async () => {
    const schema = file('batch-schema.json', invoice);
    const flags = await flagsOf<Parameters<typeof batchDefaultsOf>[0]>(
      batchCommand(),
      'q.jsonl',
      '--output-schema', schema,
      '--effort', 'low',
      '--stop-sequence', '###',
      '--tool-choice', 'crm__lookup',
      '--tool-choice-every',
      '--cache-ttl', '1h',
      '--user-id', 'batch-user',
    );
    const defaults = batchDefaultsOf(flags);
    expect(defaults).toEqual({
      output: { schema: invoice },
      effort: 'low',
      stopSequences: ['###'],
      toolChoice: { type: 'tool', name: 'crm__lookup', on: 'every' },
      cache: { ttl: '1h' },
      userId: 'batch-user',
    });
    const own = { schema: { type: 'object', properties: { ok: { type: 'boolean' } } } };
    const { items, problems } = parseBatchLines(
      [
        JSON.stringify({ id: 'plain', question: 'q1' }),
        JSON.stringify({ id: 'own', question: 'q2', output: own, effort: 'max', stopSequences: ['STOP'], toolChoice: 'auto', cache: { ttl: '5m' }, userId: 'line-user' }),
      ].join('\n'),
      defaults,
    );
    expect(problems).toEqual([]);
    expect(items.map((i) => i.input)).toEqual([
      { question: 'q1', ...defaults },
      { question: 'q2', output: own, effort: 'max', stopSequences: ['STOP'], toolChoice: 'auto', cache: { ttl: '5m' }, userId: 'line-user' },
    ]);
  });
});
