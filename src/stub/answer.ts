/**
 * What the stub answers for one valid request: the scripted step, the formatter call or the output
 * request's JSON, with templates expanded, ids and signatures filled in, the request's stop
 * sequences applied, and deterministic usage.
 */
import { createHash } from 'node:crypto';
import { isOutputRequest, outputAskIndex, outputAttempt, outputText, outputValue } from './output-request';
import { cacheCreationOf, usageWithCache } from './prompt-cache';
import { ScenarioError, type ParsedScenario } from './scenario';
import { completeServerBlocks, serverToolUsage, textBlock, usesContainer } from './server-blocks';
import { thinkingSignature, redactedData } from './signatures';
import { stopAtSequences, stopSequencesOf } from './stop-sequences';
import type { CacheCreation, Usage } from './usage';

type Block = { type: string; [k: string]: unknown };
type Message = { role: string; content: string | Block[] };

export const FORMATTER = 'response_formatter';

/** A step of the tool loop, the response formatter's call, or an output request (output-request.ts). */
export type RequestKind = 'step' | 'formatter' | 'output';

export interface Answer {
  kind: RequestKind;
  step: number;
  content: Block[];
  stopReason: string;
  /** The stop sequence that ended the content (the response's `stop_sequence`), or null. */
  stopSequence: string | null;
  usage: Usage;
  /** `usage.cache_creation`: `usage.cache_creation_input_tokens` by ttl. */
  cacheCreation: CacheCreation;
  latencyMs: number;
  /** Milliseconds between two deltas when the answer is streamed. */
  streamDelayMs: number;
  /** `usage.server_tool_use`: null without server tool blocks. */
  serverToolUse: { web_search_requests: number; web_fetch_requests: number } | null;
  /** The content ran code in a container (the response then has a `container`). */
  container: boolean;
}

const contentBlocks = (m: Message): Block[] => (typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content);

function resultText(b: Block): string {
  if (typeof b.content === 'string') return b.content;
  if (Array.isArray(b.content)) {
    return (b.content as Block[]).map((c) => (c.type === 'text' ? String(c.text) : `[${c.type}]`)).join('\n');
  }
  return '';
}

const textOf = (m: Message | undefined): string =>
  m ? contentBlocks(m).filter((b) => b.type === 'text').map((b) => String(b.text)).join('\n') : '';

export function questionOf(messages: Message[]): string {
  return textOf(messages[0]);
}

const hasToolResult = (m: Message): boolean => contentBlocks(m).some((b) => b.type === 'tool_result');

const callsFormatter = (m: Message | undefined): boolean =>
  m?.role === 'assistant' && contentBlocks(m).some((b) => b.type === 'tool_use' && b.name === FORMATTER);

/**
 * Index of a formatter request's ask: the user message the response formatter
 * (src/claude/response-formatter.ts) adds after the turn's transcript, or whose end it extends. It is
 * the last message, or the one before a repair round (the assistant's formatter call and the user's
 * results for it). The ask is not a question; the tool_results it carries are the turn's.
 */
function formatterAskIndex(messages: Message[]): number {
  const last = messages.length - 1;
  return last >= 2 && callsFormatter(messages[last - 1]) ? last - 2 : last;
}

/**
 * Index of the request's current question: its last user message without a tool_result, before
 * `end` (0 if none).
 */
function currentQuestionIndex(messages: Message[], end: number): number {
  for (let i = end - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user' && !hasToolResult(m)) return i;
  }
  return 0;
}

/**
 * The step a request asks for, the question it keys on, and the turn's transcript
 * (`messages.slice(from, to)`, what templates read). Per turn (the scenario's `perTurn`) the turn
 * starts at the current question; otherwise at the first message, which is the question. The step
 * counts the assistant messages after `from`. A formatter or output request's transcript ends with
 * its ask, leaving out the repair rounds.
 */
export function turnPosition(messages: Message[], perTurn: boolean, kind: RequestKind): { step: number; question: string; from: number; to: number } {
  const ask = kind === 'formatter' ? formatterAskIndex(messages) : kind === 'output' ? outputAskIndex(messages) : undefined;
  const to = ask === undefined ? messages.length : ask + 1;
  const from = perTurn ? currentQuestionIndex(messages, ask ?? to) : 0;
  return { step: messages.slice(from).filter((m) => m.role === 'assistant').length, question: textOf(messages[from]), from, to };
}

/** An output request comes first: it may offer the turn's tools (`response_formatter` among them) with tool_choice none. */
export function requestKind(body: Record<string, unknown>): RequestKind {
  if (isOutputRequest(body)) return 'output';
  const choice = body.tool_choice as { type?: string; name?: string } | undefined;
  if (choice?.type === 'tool' && choice.name === FORMATTER) return 'formatter';
  const tools = (body.tools ?? []) as Array<{ name?: string }>;
  if (tools.some((t) => t.name === FORMATTER) && (!choice || choice.type === 'auto')) return 'formatter';
  return 'step';
}

/** Texts of the tool_results in `messages`, leaving out the formatter's own repair results. */
function toolResultTexts(messages: Message[], lastRoundOnly: boolean): string[] {
  const formatterIds = new Set(
    messages.flatMap((m) => (m.role === 'assistant' ? contentBlocks(m) : [])).filter((b) => b.type === 'tool_use' && b.name === FORMATTER).map((b) => String(b.id)),
  );
  const results = (m: Message): Block[] =>
    contentBlocks(m).filter((b) => b.type === 'tool_result' && !formatterIds.has(String(b.tool_use_id)));
  const rounds = messages.filter((m) => m.role === 'user').map(results).filter((r) => r.length > 0);
  return (lastRoundOnly ? rounds.slice(-1) : rounds).flat().map(resultText);
}

/** The last text Claude wrote in `messages`: its last assistant message with non-blank text. */
function lastText(messages: Message[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const text = messages[i]!.role === 'assistant' ? textOf(messages[i]) : '';
    if (text.trim()) return text;
  }
  return '';
}

/**
 * The formatter's input when the scenario scripts none: the last text Claude wrote in the turn, as
 * a real formatter would turn it into the answer; the last tool round's results when it wrote none.
 */
function defaultFormatterInput(turn: Message[]): Record<string, unknown> {
  const content = lastText(turn) || toolResultTexts(turn, true).join('\n') || '(no text in the turn)';
  return { conversation: [{ type: 'text', content }] };
}

/**
 * The `{{name}}` templates of a scenario's strings: the turn's question, the texts of every tool
 * result of the turn (in order, one per line), and those of its last tool round.
 */
export function templateVars(turn: Message[], question: string): Record<string, string> {
  return {
    question,
    toolResults: toolResultTexts(turn, false).join('\n'),
    lastToolResult: toolResultTexts(turn, true).join('\n'),
  };
}

/** Replaces each `{{name}}` in the strings of `value` (nested too); an unknown name is left as written. */
function expand(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (all, name: string) => vars[name] ?? all);
  if (Array.isArray(value)) return value.map((v) => expand(v, vars));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v, vars)]));
  return value;
}

export function answer(scenarioName: string, scenario: ParsedScenario, body: Record<string, unknown>, cache: Set<string>): Answer {
  const messages = body.messages as Message[];
  const kind = requestKind(body);
  const { step, question, from, to } = turnPosition(messages, scenario.perTurn, kind);
  const turn = messages.slice(from, to);
  const vars = templateVars(turn, question);
  const sequences = stopSequencesOf(body);
  const id = (i: number, salt: string): string =>
    `toolu_${createHash('sha1').update(`${scenarioName}|${step}|${i}|${salt}|${question}`).digest('hex').slice(0, 24)}`;
  /** The usage of `content`, moving the cache on. */
  const computed = (content: Block[]): Pick<Answer, 'usage' | 'cacheCreation'> => usageWithCache(body, content, cache);

  if (kind === 'output') {
    const scripted = outputValue(scenario, body, outputAttempt(messages));
    const stopped = stopAtSequences([textBlock(outputText(expand(scripted, vars)), undefined)], sequences);
    let content = stopped.content;
    let stopReason = stopped.stopSequence === null ? 'end_turn' : 'stop_sequence';
    // The output request's own step may script a max_tokens cut (a step past the last is not replayed for it).
    const budget = scenario.steps[step]?.minMaxTokens;
    if (stopped.stopSequence === null && budget && Number(body.max_tokens) < budget) {
      const chars = Array.from(String(content[0]!.text));
      content = [textBlock(chars.slice(0, Math.floor(chars.length / 2)).join(''), undefined)];
      stopReason = 'max_tokens';
    }
    return {
      kind,
      step,
      content,
      stopReason,
      stopSequence: stopped.stopSequence,
      ...computed(content),
      latencyMs: scenario.latencyMs,
      streamDelayMs: scenario.streamDelayMs,
      serverToolUse: null,
      container: false,
    };
  }

  if (kind === 'formatter') {
    const attempt = messages.flatMap((m) => (m.role === 'assistant' ? contentBlocks(m) : [])).filter((b) => b.type === 'tool_use' && b.name === FORMATTER).length;
    const forced = (body.tool_choice as { type?: string } | undefined)?.type === 'tool';
    let content: Block[];
    if (!forced && scenario.formatterAutoText !== undefined) {
      content = [{ type: 'text', text: String(expand(scenario.formatterAutoText, vars)), citations: null }];
    } else {
      const f = scenario.formatter;
      const input = f === undefined ? defaultFormatterInput(turn) : expand(Array.isArray(f) ? f[Math.min(attempt, f.length - 1)] : f, vars);
      content = [{ type: 'tool_use', id: id(attempt, 'formatter'), name: FORMATTER, input }];
    }
    const stopped = stopAtSequences(content, sequences);
    content = stopped.content;
    return {
      kind: 'formatter',
      step,
      content,
      stopReason: stopped.stopSequence !== null ? 'stop_sequence' : forced ? 'tool_use' : content[0]!.type === 'tool_use' ? 'tool_use' : 'end_turn',
      stopSequence: stopped.stopSequence,
      ...computed(content),
      latencyMs: scenario.latencyMs,
      streamDelayMs: scenario.formatterStreamDelayMs ?? scenario.streamDelayMs,
      serverToolUse: null,
      container: false,
    };
  }

  const scripted = scenario.steps[step] ?? scenario.steps[scenario.steps.length - 1]!;
  const replay = step >= scenario.steps.length;
  const seed = (i: number): string => `${scenarioName}|${step}|${i}|server|${question}`;
  const where = `scenario ${scenarioName}, step ${Math.min(step, scenario.steps.length - 1)}`;
  // Replaying a last step that calls a tool or pauses would never end the loop, and one that answers
  // a server tool call of an earlier response has nothing to answer.
  let exhausted = replay && (scripted.content.some((b) => b.type === 'tool_use') || scripted.stopReason === 'pause_turn');
  let content: Block[] = [];
  let stopSequence: string | null = null;
  if (!exhausted) {
    const blocks = scripted.content.map((b, i): Block => {
      if (b.type === 'text') return textBlock(String(expand(b.text, vars)), expand(b.citations, vars) as Block[] | undefined);
      if (b.type === 'tool_use') return { type: 'tool_use', id: b.id ?? id(i, 'tool'), name: b.name, input: expand(b.input, vars) };
      if (b.type === 'thinking') {
        const thinking = String(expand(b.thinking, vars));
        return { type: 'thinking', thinking, signature: thinkingSignature(thinking) };
      }
      if (b.type === 'redacted_thinking') return { type: 'redacted_thinking', data: redactedData.make(`${scenarioName}|${step}|${i}`) };
      return expand(b, vars) as Block; // a server tool block, completed below
    });
    // The model stops on a stop sequence before it writes what follows (server blocks included).
    const stopped = stopAtSequences(blocks, sequences);
    stopSequence = stopped.stopSequence;
    try {
      content = completeServerBlocks(stopped.content, messages, seed, where);
    } catch (err) {
      if (!replay || !(err instanceof ScenarioError)) throw err;
      exhausted = true;
      stopSequence = null;
    }
  }
  if (exhausted) content = [{ type: 'text', text: '(scenario exhausted)', citations: null }];
  let stopReason = exhausted
    ? 'end_turn'
    : stopSequence !== null
      ? 'stop_sequence'
      : (scripted.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'));
  if (!exhausted && stopSequence === null && scripted.minMaxTokens && Number(body.max_tokens) < scripted.minMaxTokens) {
    const last = content.map((b) => b.type).lastIndexOf('tool_use');
    if (last >= 0) content = [...content.slice(0, last), { ...content[last]!, input: {} }];
    stopReason = 'max_tokens';
  }
  const usage = !exhausted && scripted.usage ? { usage: { ...scripted.usage }, cacheCreation: cacheCreationOf(scripted.usage) } : computed(content);
  return {
    kind: 'step',
    step,
    content,
    stopReason,
    stopSequence,
    ...usage,
    latencyMs: scripted.latencyMs ?? scenario.latencyMs,
    streamDelayMs: scripted.streamDelayMs ?? scenario.streamDelayMs,
    serverToolUse: serverToolUsage(content),
    container: usesContainer(content),
  };
}
