/**
 * The call that writes a turn's typed `output` (src/core/output-spec.ts): the turn's transcript,
 * then {@link OUTPUT_ASK}; with structured outputs where the model and the schema allow them, else
 * with the schema in the instructions; the answer checked against the caller's schema, and one
 * repair call when it does not validate. The turn's tools stay defined (its transcript names them)
 * but `tool_choice: none` keeps Claude from calling them; server tools are sent with citations off,
 * which structured outputs refuse. The sources cited during the loop stay in the turn's artifacts.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import type { ClaudeCallOutput, ClaudeRequest, FormatRequest, FormatResponseOutput, MessageParam, OfferedTool } from '../core/contracts';
import { ClaudeFailureType } from '../core/failure-types';
import { modelCapabilities } from '../core/model-capabilities';
import { OUTPUT_ASK, OUTPUT_REPAIR_ASK, type OutputPath, type OutputReport, type OutputSpec } from '../core/output-spec';
import { joinSystem } from '../core/prompts';
import { textOutput } from '../core/response';
import { textOf } from '../core/transcript';
import { AnswerCalls, answerControls, type AnswerCallOptions } from './answer-calls';
import { checkAnswer, type AnswerCheck } from './output-validation';
import { structuredFormatOf } from './output-format';
import { withFinalRequest } from './final-request';

/** Tokens for the repair of an answer cut off at max_tokens. */
const REPAIR_MAX_TOKENS_CEILING = 64_000;

/** The instructions of the `instructed` path: the schema, and nothing but the JSON object. */
export function outputInstructions(spec: OutputSpec): string {
  return [
    `Your final answer is one JSON object${spec.name ? ` (${spec.name})` : ''} and nothing else: no prose before or after it, no code fence.`,
    ...(spec.description ? [`It holds: ${spec.description}`] : []),
    'It must match this JSON Schema:',
    JSON.stringify(spec.schema),
  ].join('\n');
}

export type OutputRequest = FormatRequest & { output: OutputSpec };

/** Writes the turn's typed answer; errors other than a refusal of structured outputs propagate (Temporal retries them). */
export async function writeOutput(client: Anthropic, input: OutputRequest, opts: AnswerCallOptions = {}): Promise<FormatResponseOutput> {
  return new OutputRun(client, input, opts).write();
}

class OutputRun {
  private readonly notes: string[] = [];
  private readonly messages: MessageParam[];
  private readonly tools: OfferedTool[];
  private path: OutputPath;
  private format: ClaudeRequest['outputFormat'];
  private readonly calls: AnswerCalls;

  constructor(
    client: Anthropic,
    private readonly input: OutputRequest,
    opts: AnswerCallOptions,
  ) {
    this.calls = new AnswerCalls(client, opts);
    this.messages = withFinalRequest(input.messages, OUTPUT_ASK);
    this.tools = (input.tools ?? []).map(withoutCitations);
    const caps = modelCapabilities(input.model);
    const structured = structuredFormatOf(input.output);
    if (caps && !caps.structuredOutputs) {
      this.path = 'instructed';
      this.notes.push(`${input.model} has no structured outputs: the schema went in the instructions`);
    } else if (!structured.ok) {
      this.path = 'instructed';
      this.notes.push(`${structured.reason}: the schema went in the instructions`);
    } else {
      this.path = 'structured';
      this.format = structured.format;
    }
  }

  async write(): Promise<FormatResponseOutput> {
    const first = await this.firstReply();
    if (first.stopReason === 'refusal') return this.result(first, { ok: false, problems: ['Claude refused to write the answer'] }, { refused: true });
    const check = checkAnswer(textOf(first.content), this.input.output.schema);
    if (check.ok) return this.result(first, check);
    this.notes.push(`the answer did not match the schema (${check.problems.join('; ')}): asked once more`);
    const cut = first.stopReason === 'max_tokens';
    const maxTokens = cut ? Math.min(this.input.maxTokens * 2, REPAIR_MAX_TOKENS_CEILING) : this.input.maxTokens;
    if (cut) this.notes.push(`the answer was cut at max_tokens; the repair call has max_tokens ${maxTokens}`);
    const second = await this.call(repairMessages(this.messages, first, check), maxTokens);
    if (second.stopReason === 'refusal') return this.result(second, { ok: false, problems: ['Claude refused to write the answer'] }, { refused: true });
    const again = checkAnswer(textOf(second.content), this.input.output.schema);
    return this.result(second, again, { repaired: again.ok });
  }

  /** The first call; structured outputs refused by the API (a model or schema it will not take) → the instructed path. */
  private async firstReply(): Promise<ClaudeCallOutput> {
    try {
      return await this.call(this.messages, this.input.maxTokens);
    } catch (err) {
      if (this.path !== 'structured' || !isStructuredOutputRefusal(err)) throw err;
      this.path = 'instructed';
      this.format = undefined;
      this.notes.push(`structured outputs were refused (${err.message}): the schema went in the instructions`);
      return this.call(this.messages, this.input.maxTokens);
    }
  }

  private async call(messages: MessageParam[], maxTokens: number): Promise<ClaudeCallOutput> {
    const { input } = this;
    const system = joinSystem(input.system, this.path === 'instructed' ? outputInstructions(input.output) : undefined);
    const request: ClaudeRequest = {
      model: input.model,
      messages,
      tools: this.tools,
      maxTokens,
      ...(system !== undefined ? { system } : {}),
      // The transcript's tools stay defined for what it names, and are not called now.
      ...(this.tools.length ? { toolChoice: { type: 'none' as const } } : {}),
      ...(input.thinking ? { thinking: input.thinking } : {}),
      ...(input.container ? { container: input.container } : {}),
      ...(this.format ? { outputFormat: this.format } : {}),
      ...answerControls(input),
    };
    return this.calls.make(request);
  }

  private result(reply: ClaudeCallOutput, check: AnswerCheck, { repaired = false, refused = false }: { repaired?: boolean; refused?: boolean } = {}): FormatResponseOutput {
    const report: OutputReport = { path: this.path, calls: this.calls.count, repaired, notes: this.notes, ...(check.ok ? {} : { problems: check.problems }), ...(refused ? { refused } : {}) };
    const text = textOf(reply.content).trim();
    return {
      output: textOutput(text || '(no answer)'),
      mode: this.path,
      ...this.calls.totals(),
      notes: this.notes,
      typed: { ...(check.ok ? { output: check.value } : {}), report },
    };
  }
}

/** A server tool's definition with citations off (structured outputs refuse them); other tools as they are. */
function withoutCitations(tool: OfferedTool): OfferedTool {
  if (!('citations' in tool) || !tool.citations) return tool;
  const { citations: _citations, ...rest } = tool as OfferedTool & { citations?: unknown };
  return rest as OfferedTool;
}

/** The ask, the answer sent back as it was, and the problems with it. */
function repairMessages(base: MessageParam[], reply: ClaudeCallOutput, check: AnswerCheck): MessageParam[] {
  const problems = check.ok ? [] : check.problems;
  const ask = `${OUTPUT_REPAIR_ASK}\n${problems.map((p) => `- ${p}`).join('\n')}\nWrite the whole JSON object again, corrected, and nothing else.`;
  if (reply.content.length === 0) return withFinalRequest(base, ask);
  return [...base, { role: 'assistant', content: reply.content }, { role: 'user', content: ask }];
}

/** A 400 that refuses `output_config.format` (a model without structured outputs, a schema it will not take). */
export function isStructuredOutputRefusal(err: unknown): err is ApplicationFailure {
  return (
    err instanceof ApplicationFailure &&
    err.type === ClaudeFailureType.InvalidRequest &&
    /output_config|output_format|structured output|json_schema|format\.schema/i.test(err.message)
  );
}
