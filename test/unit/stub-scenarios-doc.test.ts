/**
 * docs/stub-scenarios.md and `mcp-turns stub-model --help` against the code: every field of the
 * scenario schema and every template is described, and the doc's example is a scenario that plays
 * as the doc says.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { z } from 'zod';
import { ScenarioSchema, loadScenarioFile, parseScenario, startStubModel, type Scenario } from '../../src/stub';
import { templateVars } from '../../src/stub/answer';
import { SCENARIO_HELP, stubModelCommand } from '../../src/cli/commands/stub-model';
import { FINAL_ANSWER_REQUEST, withFinalRequest } from '../../src/claude/response-formatter';

const DOC = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'stub-scenarios.md'), 'utf8');

/** Every field name, enum value and literal (a block's `type`) the schema accepts, at any depth. */
function schemaWords(node: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(node)) node.forEach((n) => schemaWords(n, out));
  else if (node && typeof node === 'object') {
    const o = node as Record<string, unknown>;
    if (o.properties && typeof o.properties === 'object') Object.keys(o.properties).forEach((k) => out.add(k));
    if (Array.isArray(o.enum)) o.enum.forEach((v) => out.add(String(v)));
    if (typeof o.const === 'string') out.add(o.const);
    Object.values(o).forEach((v) => schemaWords(v, out));
  }
  return out;
}

/** The ```json blocks of the doc; `after` picks the one right after that marker. */
function jsonBlocks(after?: string): string[] {
  const text = after ? DOC.slice(DOC.indexOf(after) + after.length) : DOC;
  const blocks = [...text.matchAll(/^```json\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  return after ? blocks.slice(0, 1) : blocks;
}

const EXAMPLE_MARKER = '<!-- example-scenario -->';

it('describes every field, enum value and block type of the scenario schema', () => {
  const words = [...schemaWords(z.toJSONSchema(ScenarioSchema, { io: 'input' }))];
  expect(words.length).toBeGreaterThan(30);
  expect(words.filter((w) => !DOC.includes(`\`${w}\``))).toEqual([]);
});

it('describes every template', () => {
  const names = Object.keys(templateVars([], ''));
  expect(names).toEqual(expect.arrayContaining(['question', 'toolResults', 'lastToolResult']));
  expect(names.filter((n) => !DOC.includes(`\`{{${n}}}\``))).toEqual([]);
});

it('has scenarios that parse: the complete example as a file, the others with the schema', () => {
  expect(DOC).toContain(EXAMPLE_MARKER);
  const [example] = jsonBlocks(EXAMPLE_MARKER);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'stub-scenarios-doc-'));
  fs.writeFileSync(path.join(dir, 'hello.json'), example!);
  expect(loadScenarioFile(path.join(dir, 'hello.json'))).toEqual(JSON.parse(example!));
  const scenarios = jsonBlocks().filter((b) => 'steps' in (JSON.parse(b) as object));
  expect(scenarios.length).toBeGreaterThanOrEqual(3);
  for (const s of scenarios) expect(() => parseScenario(JSON.parse(s), 'doc')).not.toThrow();
});

it('plays the complete example as the doc says it answers', async () => {
  // As `mcp-turns stub-model --scenario hello.json` serves it: the default scenario, for every model.
  const hello = JSON.parse(jsonBlocks(EXAMPLE_MARKER)[0]!) as Scenario;
  const stub = await startStubModel({ scenarios: { hello }, defaultScenario: 'hello' });
  try {
    const client = new Anthropic({ apiKey: 'test', baseURL: stub.url, maxRetries: 0 });
    const tools = [{ name: 'everything__echo', input_schema: { type: 'object' as const } }];
    const asked: Anthropic.MessageParam[] = [{ role: 'user', content: 'hello' }];
    const first = await client.messages.create({ model: 'any', max_tokens: 100, tools, messages: asked });
    const use = first.content.find((b) => b.type === 'tool_use')!;
    expect(use).toMatchObject({ name: 'everything__echo', input: { message: 'hello' } });
    // server-everything's echo answers "Echo: <message>".
    const transcript: Anthropic.MessageParam[] = [
      ...asked,
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Echo: hello' }] },
    ];
    const second = await client.messages.create({ model: 'any', max_tokens: 100, tools, messages: transcript });
    expect(second.content).toMatchObject([{ type: 'text', text: 'The echo tool said: Echo: hello' }]);
    const formatted = await client.messages.create({
      model: 'any',
      max_tokens: 100,
      tools: [{ name: 'response_formatter', input_schema: { type: 'object' } }],
      tool_choice: { type: 'tool', name: 'response_formatter' },
      messages: withFinalRequest([...transcript, { role: 'assistant', content: second.content }], FINAL_ANSWER_REQUEST),
    });
    const answer = 'You asked "hello"; the tool answered Echo: hello.';
    expect(formatted.content).toMatchObject([{ type: 'tool_use', input: { conversation: [{ type: 'text', content: answer }] } }]);
    expect(DOC).toContain(`\`${answer}\``);
  } finally {
    await stub.close();
  }
});

it('stub-model --help summarises every top-level field and names the doc, in the repo and installed', () => {
  let help = '';
  const command = stubModelCommand().configureOutput({ writeOut: (s) => (help += s) });
  command.outputHelp();
  expect(help).toContain(SCENARIO_HELP.trim());
  const fields = Object.keys(ScenarioSchema.shape);
  expect(fields.filter((f) => !help.includes(f))).toEqual([]);
  expect(help).toContain('docs/stub-scenarios.md');
  expect(help).toContain('node_modules/mcp-turns/docs/stub-scenarios.md');
  const example = /Example \(hello\.json\):\n([\s\S]*?)\n {2}mcp-turns stub-model/.exec(help)?.[1];
  expect(() => parseScenario(JSON.parse(example!), 'help')).not.toThrow();
});
