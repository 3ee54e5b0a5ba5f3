/**
 * The response formatter (docs/response-format.md): one last Claude call, forced to answer through
 * the `response_formatter` tool, whose input is the structured answer. Models do not always comply,
 * so the result is validated, repaired once, and otherwise replaced by a plain-text fallback; and
 * where forced tool use is refused (extended thinking, some newer models) the tool is offered with
 * `tool_choice: auto` instead.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { ApplicationFailure } from '@temporalio/common';
import type {
  ClaudeRequest,
  ClaudeCallOutput,
  ContentBlock,
  ContentBlockParam,
  FormatMode,
  FormatRequest,
  FormatResponseOutput,
  MessageParam,
} from '../core/contracts';
import {
  FORMATTER_INSTRUCTIONS,
  FORMATTER_TOOL,
  FORMATTER_TOOL_NAME,
  FormatterOutputSchema,
  describeFormatterErrors,
  type FormatterOutput,
} from '../schemas/response-formatter-tool';
import { joinSystem } from '../core/prompts';
import { textOutput } from '../core/response';
import { lastAssistantText, textOf, toolUses, type ToolUseBlock } from '../core/transcript';
import { ClaudeFailureType } from '../core/failure-types';
import { writeOutput } from './output-writer';
import { AnswerCalls, answerControls, type AnswerCallOptions } from './answer-calls';
import { withFinalRequest } from './final-request';

export { withFinalRequest };

/** Appended to the transcript so it ends with a user turn asking for the formatted answer. */
export const FINAL_ANSWER_REQUEST = `Now give your final answer to my question using the ${FORMATTER_TOOL_NAME} tool.`;

/** Added to the system prompt when the tool is only offered (`tool_choice` auto). */
export const AUTO_INSTRUCTIONS = `Call the ${FORMATTER_TOOL_NAME} tool exactly once, with your complete final answer.`;

/** The answer's text when no structured answer could be recovered at all. */
export const NO_STRUCTURED_ANSWER = "The model didn't provide a properly structured response.";

/** Goes in `thinking` of a fallback answer, so the UI can tell it apart. */
export const FALLBACK_THINKING =
  'Formatter output was incomplete; this is the last answer text from the conversation.';

/** Result for a tool_use block that is not the formatter (only the formatter is offered). */
const NOT_A_TOOL = `Only the ${FORMATTER_TOOL_NAME} tool is available now.`;

/** Tokens for the repair of an answer cut off at max_tokens. */
const REPAIR_MAX_TOKENS_CEILING = 64_000;

/** Options of the formatter's call. */
export type FormatResponseOptions = AnswerCallOptions;

type Attempt =
  | { kind: 'valid'; output: FormatterOutput }
  | { kind: 'invalid'; use: ToolUseBlock; problems: string[] }
  | { kind: 'text'; text: string }
  | { kind: 'empty' };

/**
 * Runs the formatter over the whole transcript. Modes: `forced` (valid first answer), `repaired`
 * (valid after one repair call), `auto` (forced tool use refused or thinking on: the tool offered,
 * or plain text used), `fallback` (no valid answer: the last assistant text). Errors other than a
 * refusal of forced tool use propagate, so Temporal retries the retryable ones.
 */
export async function formatResponse(
  client: Anthropic,
  input: FormatRequest,
  opts: FormatResponseOptions = {},
): Promise<FormatResponseOutput> {
  // A turn's typed `output` is written by its own call, not the formatter's tool.
  if (input.output) return writeOutput(client, { ...input, output: input.output }, opts);
  const run = new FormatterRun(client, input, opts);
  if (input.thinking) {
    run.notes.push(
      'extended thinking is on, and forced tool_choice is refused with it: used tool_choice auto',
    );
    return run.auto();
  }
  let reply: ClaudeCallOutput;
  try {
    reply = await run.call(run.messages, 'forced');
  } catch (err) {
    if (!isForcedToolRefusal(err)) throw err;
    run.notes.push(`forced tool_choice was refused (${err.message}): used tool_choice auto`);
    return run.auto();
  }
  return run.finish(reply, 'forced');
}

/** One formatter run: its calls, usage and notes. */
class FormatterRun {
  readonly notes: string[] = [];
  readonly messages: MessageParam[];
  private readonly calls: AnswerCalls;
  /** The last invalid formatter input, for the fallback. */
  private lastInvalid: unknown;

  constructor(
    client: Anthropic,
    private readonly input: FormatRequest,
    opts: FormatResponseOptions,
  ) {
    this.calls = new AnswerCalls(client, opts);
    this.messages = withFinalRequest(input.messages, FINAL_ANSWER_REQUEST);
  }

  async auto(): Promise<FormatResponseOutput> {
    return this.finish(await this.call(this.messages, 'auto'), 'auto');
  }

  async call(
    messages: MessageParam[],
    choice: 'forced' | 'auto',
    maxTokens = this.input.maxTokens,
  ): Promise<ClaudeCallOutput> {
    const request: ClaudeRequest = {
      model: this.input.model,
      messages,
      tools: [...(this.input.tools ?? []), FORMATTER_TOOL],
      maxTokens,
    };
    const system = joinSystem(
      this.input.system,
      FORMATTER_INSTRUCTIONS,
      choice === 'auto' ? AUTO_INSTRUCTIONS : undefined,
    );
    if (system !== undefined) request.system = system;
    // Auto is the API's default when tools are given, so the auto path sends no tool_choice.
    if (choice === 'forced') request.toolChoice = { type: 'tool', name: FORMATTER_TOOL_NAME };
    if (this.input.thinking) request.thinking = this.input.thinking;
    if (this.input.container) request.container = this.input.container;
    Object.assign(request, answerControls(this.input));
    return this.calls.make(request);
  }

  /** Turns the first reply into the answer, with at most one repair call. */
  async finish(reply: ClaudeCallOutput, choice: 'forced' | 'auto'): Promise<FormatResponseOutput> {
    const first = readAttempt(reply.content);
    if (first.kind === 'valid') return this.result(first.output, choice);
    if (first.kind === 'text' && choice === 'auto') {
      this.notes.push(
        `the model answered in plain text instead of calling ${FORMATTER_TOOL_NAME}; used the text`,
      );
      return this.result(textOutput(first.text), 'auto');
    }
    if (first.kind === 'invalid') this.lastInvalid = first.use.input;
    this.notes.push(`first formatter answer unusable: ${describeAttempt(first)}`);

    const cut = reply.stopReason === 'max_tokens';
    const maxTokens = cut
      ? Math.min(this.input.maxTokens * 2, REPAIR_MAX_TOKENS_CEILING)
      : this.input.maxTokens;
    if (cut) this.notes.push(`the answer was cut at max_tokens; repair call with max_tokens ${maxTokens}`);
    const repaired = await this.call(repairMessages(this.messages, reply.content, first), choice, maxTokens);
    const second = readAttempt(repaired.content);
    if (second.kind === 'valid') {
      this.notes.push('repair call returned a valid answer');
      return this.result(second.output, 'repaired');
    }
    if (second.kind === 'text' && choice === 'auto') {
      this.notes.push(`repair call answered in plain text; used the text`);
      return this.result(textOutput(second.text), 'auto');
    }
    if (second.kind === 'invalid') this.lastInvalid = second.use.input;
    this.notes.push(`repair call unusable: ${describeAttempt(second)}`);
    return this.fallback();
  }

  /**
   * A formatter answer without a usable conversation array: answer with the last assistant text of
   * the transcript, else with the text inside the invalid formatter input.
   */
  private fallback(): FormatResponseOutput {
    const last = lastAssistantText(this.input.messages);
    if (last) {
      this.notes.push('fallback: used the last assistant text of the conversation');
      return this.result(textOutput(last, FALLBACK_THINKING), 'fallback');
    }
    const salvaged = salvageText(this.lastInvalid);
    this.notes.push(
      salvaged ? 'fallback: used the text of the invalid formatter input' : 'fallback: no answer text found',
    );
    return this.result(textOutput(salvaged ?? NO_STRUCTURED_ANSWER, FALLBACK_THINKING), 'fallback');
  }

  private result(output: FormatterOutput, mode: FormatMode): FormatResponseOutput {
    return { output, mode, ...this.calls.totals(), notes: this.notes };
  }
}

/** The formatter's answer in a reply, validated. */
function readAttempt(content: ContentBlock[]): Attempt {
  const use = toolUses(content).find((u) => u.name === FORMATTER_TOOL_NAME);
  if (use) {
    const parsed = FormatterOutputSchema.safeParse(use.input);
    return parsed.success
      ? { kind: 'valid', output: parsed.data }
      : { kind: 'invalid', use, problems: describeFormatterErrors(parsed.error) };
  }
  const text = textOf(content).trim();
  return text ? { kind: 'text', text } : { kind: 'empty' };
}

function describeAttempt(a: Attempt): string {
  switch (a.kind) {
    case 'invalid':
      return `invalid ${FORMATTER_TOOL_NAME} input (${a.problems.join('; ')})`;
    case 'text':
      return `plain text instead of a ${FORMATTER_TOOL_NAME} call`;
    case 'empty':
      return 'no content';
    case 'valid':
      return 'valid';
  }
}

/**
 * The transcript plus the repair turn: the assistant's reply sent back unchanged, then a user
 * message that answers every tool_use (the formatter's with `is_error` and the problems) and asks
 * for a corrected call.
 */
function repairMessages(base: MessageParam[], reply: ContentBlock[], attempt: Attempt): MessageParam[] {
  const ask = `Call ${FORMATTER_TOOL_NAME} again with a corrected input that follows its schema.`;
  const uses = toolUses(reply);
  if (uses.length === 0) {
    const nudge = `You did not call the ${FORMATTER_TOOL_NAME} tool. ${ask}`;
    // An empty assistant turn cannot be sent back; ask again in the last user turn instead.
    if (reply.length === 0) return withFinalRequest(base, nudge);
    return [...base, { role: 'assistant', content: reply }, { role: 'user', content: nudge }];
  }
  const problems = attempt.kind === 'invalid' ? attempt.problems : [];
  const results: ContentBlockParam[] = uses.map((u) => ({
    type: 'tool_result',
    tool_use_id: u.id,
    is_error: true,
    content:
      u.name === FORMATTER_TOOL_NAME && u === (attempt.kind === 'invalid' ? attempt.use : undefined)
        ? `The ${FORMATTER_TOOL_NAME} input was invalid:\n${problems.map((p) => `- ${p}`).join('\n')}\n${ask}`
        : u.name === FORMATTER_TOOL_NAME
          ? `Ignored: only one ${FORMATTER_TOOL_NAME} call is used.`
          : NOT_A_TOOL,
  }));
  return [...base, { role: 'assistant', content: reply }, { role: 'user', content: results }];
}

/** Text worth showing from an invalid formatter input (e.g. `conversation` sent as a string). */
function salvageText(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const conversation = (input as { conversation?: unknown }).conversation;
  if (typeof conversation === 'string' && conversation.trim()) return conversation.trim();
  if (Array.isArray(conversation)) {
    const parts = conversation
      .map((item: unknown) =>
        typeof item === 'string'
          ? item
          : typeof item === 'object' &&
              item !== null &&
              typeof (item as { content?: unknown }).content === 'string'
            ? (item as { content: string }).content
            : '',
      )
      .filter((t) => t.trim());
    if (parts.length) return parts.join('\n\n');
  }
  return undefined;
}

/** A 400 that refuses `tool_choice` forcing a tool (extended thinking on, or a model without it). */
export function isForcedToolRefusal(err: unknown): err is ApplicationFailure {
  return (
    err instanceof ApplicationFailure &&
    err.type === ClaudeFailureType.InvalidRequest &&
    /tool_choice|tool choice|forced tool|force tool/i.test(err.message)
  );
}
