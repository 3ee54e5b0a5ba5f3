/**
 * The typed answer's pieces without a server: the path it takes (model, schema, the API's refusal),
 * the request it sends, validation against the caller's schema and the repair; the request
 * controls' checks, defaults and requests; the model capability table.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { ClaudeCallOutput, ClaudeRequest } from '../../src/core/contracts';
import { writeOutput } from '../../src/claude/output-writer';
import { structuredFormatOf } from '../../src/claude/output-format';
import { checkAnswer, parseAnswerText } from '../../src/claude/output-validation';
import { buildMessageParams } from '../../src/claude/call-claude';
import { ClaudeFailureType } from '../../src/core/failure-types';
import { effortProblem, modelCapabilities } from '../../src/core/model-capabilities';
import { OUTPUT_ASK } from '../../src/core/output-spec';
import { requestControlProblems } from '../../src/core/request-control-checks';
import { toolChoiceForStep, loopToolChoiceOf } from '../../src/core/request-controls';
import { resolveTurn } from '../../src/core/resolve-turn';
import { ZERO_USAGE } from '../../src/core/usage';
import { parseChatTurnInput } from '../../src/schemas/turn-input';
import { resolveClaudeConfig } from '../../src/claude/config';

const SCHEMA = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] };
const reply = (text: string, stopReason: ClaudeCallOutput['stopReason'] = 'end_turn'): ClaudeCallOutput => ({
  content: [{ type: 'text', text, citations: null }],
  stopReason,
  usage: { ...ZERO_USAGE, inputTokens: 10, outputTokens: 5 },
  model: 'm',
});

/** Runs writeOutput with scripted replies; the requests it made. */
async function write(model: string, replies: Array<ClaudeCallOutput | Error>, schema: Record<string, unknown> = SCHEMA) {
  const requests: ClaudeRequest[] = [];
  const out = await writeOutput(
    undefined as never,
    { model, maxTokens: 1000, messages: [{ role: 'user', content: 'q' }], output: { schema, name: 'count' }, effort: 'low', userId: 'u1' },
    {
      call: async (request) => {
        requests.push(request);
        const next = replies.shift()!;
        if (next instanceof Error) throw next;
        return next;
      },
    },
  );
  return { out, requests };
}

describe('the typed answer', () => {
  it('takes the structured path: the rewritten schema, the ask, the controls; a valid answer in one call', async () => {
    const { out, requests } = await write('claude-sonnet-4-6', [reply('{"n":3}')]);
    expect(out.typed).toEqual({ output: { n: 3 }, report: { path: 'structured', calls: 1, repaired: false, notes: [] } });
    expect(out.mode).toBe('structured');
    const [request] = requests;
    expect(request!.outputFormat?.schema).toMatchObject({ additionalProperties: false, properties: { n: { type: 'integer' } } });
    expect(request!.effort).toBe('low');
    expect(request!.userId).toBe('u1');
    expect(JSON.stringify(request!.messages.at(-1))).toContain(OUTPUT_ASK);
    expect(request!.toolChoice).toBeUndefined(); // no tools to keep from being called
  });

  it('repairs once against the caller\'s schema, then reports the problems', async () => {
    const repaired = await write('claude-sonnet-4-6', [reply('{"n":0}'), reply('{"n":1}')]);
    expect(repaired.out.typed).toMatchObject({ output: { n: 1 }, report: { calls: 2, repaired: true } });
    const repair = repaired.requests[1]!.messages;
    expect(repair.at(-2)).toEqual({ role: 'assistant', content: [{ type: 'text', text: '{"n":0}', citations: null }] });
    expect(String(repair.at(-1)!.content)).toContain('/n must be >= 1');

    const failed = await write('claude-sonnet-4-6', [reply('{"n":0}'), reply('not json')]);
    expect(failed.out.typed!.output).toBeUndefined();
    expect(failed.out.typed!.report.problems![0]).toMatch(/^the answer is not JSON/);
  });

  it('raises max_tokens for the repair of an answer cut off', async () => {
    const { requests } = await write('claude-sonnet-4-6', [reply('{"n":', 'max_tokens'), reply('{"n":2}')]);
    expect(requests.map((r) => r.maxTokens)).toEqual([1000, 2000]);
  });

  it('takes the instructed path for a model without structured outputs, and after the API refuses them', async () => {
    const old = await write('claude-3-5-haiku-20241022', [reply('```json\n{"n":4}\n```')]);
    expect(old.out.typed).toMatchObject({ output: { n: 4 }, report: { path: 'instructed' } });
    expect(old.requests[0]!.outputFormat).toBeUndefined();
    expect(old.requests[0]!.system).toContain('JSON Schema');

    const refusal = ApplicationFailure.create({ type: ClaudeFailureType.InvalidRequest, message: 'Claude API 400: output_config.format.schema: too complex', nonRetryable: true });
    const refused = await write('claude-unknown-model', [refusal, reply('{"n":5}')]);
    expect(refused.out.typed).toMatchObject({ output: { n: 5 }, report: { path: 'instructed' } });
    expect(refused.requests.map((r) => r.outputFormat !== undefined)).toEqual([true, false]);
    expect(refused.out.typed!.report.notes[0]).toMatch(/structured outputs were refused/);
  });

  it('ends with a refusal when Claude refuses to write it', async () => {
    const { out } = await write('claude-sonnet-4-6', [reply('', 'refusal')]);
    expect(out.typed!.report).toMatchObject({ refused: true });
  });

  it('sends the structured path only schemas it can express', () => {
    expect(structuredFormatOf({ schema: { type: 'object', properties: { kids: { type: 'array', items: { $ref: '#' } } } } })).toMatchObject({ ok: false, reason: expect.stringMatching(/refers to itself/) });
    expect(structuredFormatOf({ schema: { type: 'object', $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } } } }, properties: { head: { $ref: '#/$defs/node' } } } })).toMatchObject({ ok: false });
    expect(structuredFormatOf({ schema: { type: 'object', $defs: { p: { type: 'string' } }, properties: { a: { $ref: '#/$defs/p' }, b: { $ref: '#/$defs/p' } } } })).toMatchObject({ ok: true });
    // draft-07 `definitions` become `$defs`, which the SDK's transform keeps.
    const draft07 = structuredFormatOf({ schema: { type: 'object', definitions: { p: { type: 'object', properties: { x: { type: 'string' } } } }, properties: { a: { $ref: '#/definitions/p' } } } });
    expect(draft07).toMatchObject({ ok: true, format: { schema: { $defs: { p: { additionalProperties: false } }, properties: { a: { $ref: '#/$defs/p' } } } } });
  });

  it('reads the answer whole or inside one code fence, and checks formats', () => {
    expect(parseAnswerText(' {"a":1} ')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseAnswerText('```\n{"a":1}\n```')).toEqual({ ok: true, value: { a: 1 } });
    expect(checkAnswer('[1]', SCHEMA)).toEqual({ ok: false, problems: ['the answer is not a JSON object'] });
    expect(checkAnswer('{"d":"yesterday"}', { type: 'object', properties: { d: { type: 'string', format: 'date' } } })).toEqual({ ok: false, problems: ['/d must match format "date"'] });
  });
});

describe('the request controls', () => {
  it('are refused where the API would refuse them, naming the field', () => {
    expect(requestControlProblems({ thinking: { budgetTokens: 2048 }, toolChoice: 'any' })[0]).toMatch(/^toolChoice: forcing a tool/);
    expect(requestControlProblems({ thinking: { budgetTokens: 2048 }, toolChoice: 'none' })).toEqual([]);
    expect(requestControlProblems({ model: 'claude-haiku-4-5', effort: 'low' })[0]).toMatch(/^effort: claude-haiku-4-5 takes no effort setting/);
    expect(requestControlProblems({ model: 'claude-sonnet-4-6', effort: 'max' })).toEqual([]);
    expect(requestControlProblems({ model: 'my-scenario', effort: 'xhigh' })).toEqual([]);
    expect(() => parseChatTurnInput({ question: 'q', top_p: 0.9 })).toThrow(/top_p: the Messages API \(version 2026-10-21\) no longer takes/);
    expect(() => parseChatTurnInput({ question: 'q', cache: { ttl: '5m', conversationTtl: '1h' } })).toThrow(/cache.conversationTtl: .*1 h breakpoints come first/);
    expect(() => parseChatTurnInput({ question: 'q', output: { schema: { type: 'array' } } })).toThrow(/output.schema: the answer is a JSON object/);
    expect(() => parseChatTurnInput({ question: 'q', userId: 'ada@example.com' })).toThrow(/userId: an opaque id/);
    expect(() => resolveClaudeConfig({ temperature: 0.2 })).toThrow(/claude.temperature: the Messages API/);
  });

  it('take the worker\'s defaults where the turn sets none', () => {
    const worker = resolveClaudeConfig({ effort: 'medium', stopSequences: ['END'], cache: { ttl: '1h' } });
    const defaults = { effort: worker.effort!, stopSequences: worker.stopSequences!, cache: worker.cache! };
    expect(resolveTurn({ question: 'q' }, defaults)).toMatchObject(defaults);
    expect(resolveTurn({ question: 'q', effort: 'high' }, defaults).effort).toBe('high');
  });

  it('force the loop\'s first call, or every call', () => {
    expect([1, 2].map((step) => toolChoiceForStep(loopToolChoiceOf('any'), step))).toEqual([{ type: 'any' }, undefined]);
    const every = loopToolChoiceOf({ type: 'tool', name: 'crm__lookup', on: 'every', disableParallelToolUse: true });
    expect(toolChoiceForStep(every, 3, 'crm__lookup')).toEqual({ type: 'tool', name: 'crm__lookup', disable_parallel_tool_use: true });
    expect(toolChoiceForStep(loopToolChoiceOf('none'), 1)).toEqual({ type: 'none' });
  });

  it('go where the API takes them; 1 h breakpoints before the 5 min one', () => {
    const params = buildMessageParams({
      model: 'm',
      maxTokens: 10,
      system: 'sys',
      messages: [{ role: 'user', content: 'q' }],
      tools: [{ name: 't', input_schema: { type: 'object' } }],
      effort: 'low',
      stopSequences: ['###'],
      userId: 'u1',
      cache: { ttl: '1h' },
      outputFormat: { type: 'json_schema', schema: { type: 'object', additionalProperties: false } },
    });
    expect(params.output_config).toEqual({ effort: 'low', format: { type: 'json_schema', schema: { type: 'object', additionalProperties: false } } });
    expect(params.stop_sequences).toEqual(['###']);
    expect(params.metadata).toEqual({ user_id: 'u1' });
    expect(params.tools![0]).toMatchObject({ cache_control: { type: 'ephemeral', ttl: '1h' } });
    expect(params.system).toEqual([{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral', ttl: '1h' } }]);
    expect(params.messages[0]!.content).toEqual([{ type: 'text', text: 'q', cache_control: { type: 'ephemeral' } }]);
  });
});

describe('the model capability table', () => {
  it('knows models by family and version, dated and on platforms, and leaves unknown ones to the API', () => {
    expect(modelCapabilities('claude-opus-4-5-20251101')?.efforts).toEqual(['low', 'medium', 'high']);
    expect(modelCapabilities('us.anthropic.claude-sonnet-4-6-v1:0')?.structuredOutputs).toBe(true);
    expect(modelCapabilities('claude-sonnet-4-20250514')?.structuredOutputs).toBe(false);
    expect(modelCapabilities('claude-3-5-sonnet-latest')?.structuredOutputs).toBe(false);
    expect(modelCapabilities('claude-opus-4-9')).toBeUndefined();
    expect(effortProblem('claude-opus-4-6', 'xhigh')).toMatch(/use one of low, medium, high, max/);
  });
});
