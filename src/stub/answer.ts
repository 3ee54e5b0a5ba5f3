/**
 * What the stub answers for one valid request: the scripted step or the formatter call, with
 * templates expanded, ids and signatures filled in, and deterministic usage.
 */
import { createHash } from 'node:crypto';
import type { ParsedScenario } from './scenario';
import { thinkingSignature, redactedData } from './signatures';

type Block = { type: string; [k: string]: unknown };
type Message = { role: string; content: string | Block[] };

export const FORMATTER = 'response_formatter';

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export interface Answer {
  kind: 'step' | 'formatter';
  step: number;
  content: Block[];
  stopReason: string;
  usage: Usage;
  latencyMs: number;
  /** Milliseconds between two deltas when the answer is streamed. */
  streamDelayMs: number;
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

/** Index of the request's current question: its last user message without a tool_result (0 if none). */
function currentQuestionIndex(messages: Message[]): number {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user' && !contentBlocks(m).some((b) => b.type === 'tool_result')) return i;
  }
  return 0;
}

/**
 * The step a request asks for and the question it keys on: per turn (the scenario's `perTurn`),
 * counted from the current question; otherwise over the whole request, with the first message.
 */
export function turnPosition(messages: Message[], perTurn: boolean): { step: number; question: string; from: number } {
  const from = perTurn ? currentQuestionIndex(messages) : 0;
  return { step: messages.slice(from).filter((m) => m.role === 'assistant').length, question: textOf(messages[from]), from };
}

export function requestKind(body: Record<string, unknown>): 'step' | 'formatter' {
  const choice = body.tool_choice as { type?: string; name?: string } | undefined;
  if (choice?.type === 'tool' && choice.name === FORMATTER) return 'formatter';
  const tools = (body.tools ?? []) as Array<{ name?: string }>;
  if (tools.some((t) => t.name === FORMATTER) && (!choice || choice.type === 'auto')) return 'formatter';
  return 'step';
}

/** Texts of the tool_results in the request, leaving out the formatter's own repair results. */
function toolResultTexts(messages: Message[], lastOnly: boolean): string[] {
  const formatterIds = new Set(
    messages.flatMap((m) => (m.role === 'assistant' ? contentBlocks(m) : [])).filter((b) => b.type === 'tool_use' && b.name === FORMATTER).map((b) => String(b.id)),
  );
  const users = messages.filter((m) => m.role === 'user');
  const scope = lastOnly ? users.slice(-1) : users;
  return scope.flatMap((m) => contentBlocks(m)).filter((b) => b.type === 'tool_result' && !formatterIds.has(String(b.tool_use_id))).map(resultText);
}

function expand(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{\{(\w+)\}\}/g, (all, name: string) => vars[name] ?? all);
  if (Array.isArray(value)) return value.map((v) => expand(v, vars));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, expand(v, vars)]));
  return value;
}

const tokens = (value: unknown): number => Math.ceil(Buffer.byteLength(JSON.stringify(value ?? null)) / 4);

export function estimateInputTokens(body: Record<string, unknown>): number {
  return tokens({ system: body.system, messages: body.messages, tools: body.tools });
}

/** A request part without its cache_control markers: the cache keys on content, not on markers. */
function unmarked(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null, (key, v: unknown) => (key === 'cache_control' ? undefined : v)));
}

const marked = (value: unknown): boolean => JSON.stringify(value ?? null).includes('"cache_control"');

/**
 * Usage: input = bytes/4 of {system, messages, tools}; output = bytes/4 of the content. Caching as the
 * API does it, by prefix (tools, then system, then messages): a `cache_control` marker writes the
 * prefix up to it (cache creation) unless it is cached already; a request reads the longest cached
 * prefix that ends at or before its last marker (at the tools+system boundary or a message boundary;
 * the API's 20-block lookback is not modelled). Read and written tokens are not counted in
 * input_tokens.
 */
function usageFor(body: Record<string, unknown>, content: Block[], cache: Set<string>): Usage {
  const total = estimateInputTokens(body);
  const messages = (body.messages ?? []) as Message[];
  // A string is the same content as one text block (the last message is sent as blocks to carry a marker).
  const asBlocks = (content: unknown): unknown => (typeof content === 'string' ? [{ type: 'text', text: content }] : content);
  const head = { tools: unmarked(body.tools), system: unmarked(asBlocks(body.system)) };
  const plain = messages.map((m) => ({ role: m.role, content: unmarked(asBlocks(m.content)) }));
  const key = (count: number): string =>
    createHash('sha1').update(JSON.stringify({ head, messages: plain.slice(0, count) })).digest('hex');
  const size = (count: number): number => tokens({ ...head, messages: plain.slice(0, count) });
  // Prefix k: the tools and system, and the first k messages. Markers end prefixes.
  const ends: number[] = [];
  if (marked(body.tools) || marked(body.system)) ends.push(0);
  messages.forEach((m, i) => marked(m.content) && ends.push(i + 1));
  if (!ends.length) return { input_tokens: total, output_tokens: tokens(content), cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  const last = ends[ends.length - 1]!;
  let read = 0;
  for (let k = last; k >= 0; k--) {
    if (cache.has(key(k))) {
      read = size(k);
      break;
    }
  }
  const created = cache.has(key(last)) ? 0 : Math.max(0, size(last) - read);
  for (const k of ends) cache.add(key(k));
  return {
    input_tokens: Math.max(1, total - read - created),
    output_tokens: tokens(content),
    cache_read_input_tokens: read,
    cache_creation_input_tokens: created,
  };
}

export function answer(scenarioName: string, scenario: ParsedScenario, body: Record<string, unknown>, cache: Set<string>): Answer {
  const messages = body.messages as Message[];
  const { step, question, from } = turnPosition(messages, scenario.perTurn);
  const vars = {
    toolResults: toolResultTexts(messages.slice(from), false).join('\n'),
    lastToolResult: toolResultTexts(messages.slice(from), true).join('\n'),
    question,
  };
  const id = (i: number, salt: string): string =>
    `toolu_${createHash('sha1').update(`${scenarioName}|${step}|${i}|${salt}|${question}`).digest('hex').slice(0, 24)}`;

  if (requestKind(body) === 'formatter') {
    const attempt = messages.flatMap((m) => (m.role === 'assistant' ? contentBlocks(m) : [])).filter((b) => b.type === 'tool_use' && b.name === FORMATTER).length;
    const forced = (body.tool_choice as { type?: string } | undefined)?.type === 'tool';
    let content: Block[];
    if (!forced && scenario.formatterAutoText !== undefined) {
      content = [{ type: 'text', text: String(expand(scenario.formatterAutoText, vars)), citations: null }];
    } else {
      const f = scenario.formatter;
      const input = Array.isArray(f) ? f[Math.min(attempt, f.length - 1)] : (f ?? { conversation: [{ type: 'text', content: vars.lastToolResult || '(no formatter scripted)' }] });
      content = [{ type: 'tool_use', id: id(attempt, 'formatter'), name: FORMATTER, input: expand(input, vars) }];
    }
    return { kind: 'formatter', step, content, stopReason: forced ? 'tool_use' : content[0]!.type === 'tool_use' ? 'tool_use' : 'end_turn', usage: usageFor(body, content, cache), latencyMs: scenario.latencyMs, streamDelayMs: scenario.formatterStreamDelayMs ?? scenario.streamDelayMs };
  }

  const scripted = scenario.steps[step] ?? scenario.steps[scenario.steps.length - 1]!;
  const exhausted = step >= scenario.steps.length && scripted.content.some((b) => b.type === 'tool_use');
  let content: Block[] = exhausted
    ? [{ type: 'text', text: '(scenario exhausted)', citations: null }]
    : scripted.content.map((b, i) => {
        if (b.type === 'text') return { type: 'text', text: String(expand(b.text, vars)), citations: null };
        if (b.type === 'tool_use') return { type: 'tool_use', id: b.id ?? id(i, 'tool'), name: b.name, input: expand(b.input, vars) };
        if (b.type === 'thinking') {
          const thinking = String(expand(b.thinking, vars));
          return { type: 'thinking', thinking, signature: thinkingSignature(thinking) };
        }
        return { type: 'redacted_thinking', data: redactedData.make(`${scenarioName}|${step}|${i}`) };
      });
  let stopReason = exhausted ? 'end_turn' : (scripted.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'));
  if (!exhausted && scripted.minMaxTokens && Number(body.max_tokens) < scripted.minMaxTokens) {
    const last = content.map((b) => b.type).lastIndexOf('tool_use');
    if (last >= 0) content = [...content.slice(0, last), { ...content[last]!, input: {} }];
    stopReason = 'max_tokens';
  }
  const usage = !exhausted && scripted.usage ? { ...scripted.usage } : usageFor(body, content, cache);
  return { kind: 'step', step, content, stopReason, usage, latencyMs: scripted.latencyMs ?? scenario.latencyMs, streamDelayMs: scripted.streamDelayMs ?? scenario.streamDelayMs };
}
