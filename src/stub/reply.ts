/**
 * How the stub answers one Messages request, whichever way it comes (/v1/messages or a request of a
 * Message Batch): the checks the API makes, the scenario the request picks, its faults, context
 * window and formatter refusal, then the scripted answer. The state is the fault counters and the
 * cache prefixes seen.
 */
import { answer, questionOf, requestKind, turnPosition, type RequestKind } from './answer';
import type { Fault, ParsedScenario } from './scenario';
import { containerOf } from './server-blocks';
import { estimateInputTokens, type CacheCreation, type Usage } from './usage';
import { validateRequest } from './validate-request';

/** Where a Messages request falls in its scenario. Best effort for a request the API refuses. */
export interface RequestPlace {
  /** Empty when no scenario answers the request. */
  scenario: string;
  kind: RequestKind;
  /** Number of assistant messages in the request (after its current question, for a `perTurn` scenario). */
  step: number;
  question: string;
}

/**
 * What one Messages request is answered, whichever way it came (/v1/messages or a batch): the
 * Message, or the API's error for it. `latencyMs` is the wait before an interactive answer.
 */
export type Reply =
  | { type: 'message'; message: Record<string, unknown>; usage: Usage & { cache_creation: CacheCreation }; latencyMs: number; streamDelayMs: number }
  | {
      type: 'error';
      status: number;
      errorType: string;
      message: string;
      headers: Record<string, string>;
      latencyMs: number;
      /** Refused before its scenario played (invalid request, no scenario). */
      refused: boolean;
      /** The scenario fault that answered it. */
      fault?: Fault;
    };

const ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};
/** The API's error type for an HTTP status. */
export const errorTypeOf = (status: number): string => ERROR_TYPES[status] ?? 'api_error';

export interface Replier {
  place(body: Record<string, unknown>): RequestPlace;
  /** The answer to one request; a matching fault uses up one of its `times`, the answer moves the cache on. */
  reply(body: Record<string, unknown>, messageId: string): Reply;
  /** Forgets the fault counters and the cache. */
  reset(): void;
}

export function createReplier(scenarios: Map<string, ParsedScenario>, defaultScenario: string | undefined): Replier {
  const faultCounts = new Map<string, number>();
  const cachePrefixes = new Set<string>();
  /** Containers expire 30 days after the stub started. */
  const startedAt = Date.now();

  function pick(body: Record<string, unknown>): { name: string; scenario: ParsedScenario } | string {
    const model = String(body.model);
    if (scenarios.has(model)) return { name: model, scenario: scenarios.get(model)! };
    const marker = /\[\[scenario:([^\]]+)\]\]/.exec(questionOf((body.messages ?? []) as never[]))?.[1];
    const name = marker ?? defaultScenario;
    if (!name) return `model: no scenario named "${model}" (and no [[scenario:NAME]] marker or default scenario)`;
    const scenario = scenarios.get(name);
    return scenario ? { name, scenario } : `no scenario named "${name}"`;
  }

  function place(body: Record<string, unknown>): RequestPlace {
    const where: RequestPlace = { scenario: '', kind: 'step', step: 0, question: '' };
    const messages = body.messages;
    if (Array.isArray(messages)) where.step = (messages as Array<{ role?: string } | null>).filter((m) => m?.role === 'assistant').length;
    // A malformed request (validateRequest refuses it) keeps what could be read.
    try {
      where.kind = requestKind(body);
      const picked = pick(body);
      if (typeof picked !== 'string') where.scenario = picked.name;
      const position = turnPosition(messages as never[], typeof picked !== 'string' && picked.scenario.perTurn, where.kind);
      where.step = position.step;
      where.question = position.question;
    } catch {
      // nothing more to read
    }
    return where;
  }

  const error = (status: number, message: string, more: Partial<Extract<Reply, { type: 'error' }>> = {}): Reply => ({
    type: 'error',
    status,
    errorType: errorTypeOf(status),
    message,
    headers: {},
    latencyMs: 0,
    refused: false,
    ...more,
  });

  /**
   * The answer to one Messages request: the checks the API makes, the scenario's faults (each
   * matching request uses up one of a fault's `times`), its context window and formatter refusal,
   * then the scripted answer (which moves the cache on).
   */
  function reply(body: Record<string, unknown>, messageId: string): Reply {
    const invalid = validateRequest(body);
    if (invalid) return error(400, invalid, { refused: true });
    const picked = pick(body);
    if (typeof picked === 'string') return error(400, picked, { refused: true });
    const { name, scenario } = picked;
    const kind = requestKind(body);
    const { step, question } = turnPosition(body.messages as never[], scenario.perTurn, kind);
    for (const fault of scenario.faults) {
      if (fault.step !== step || fault.kind !== kind) continue;
      const key = `${name}|${fault.step}|${fault.kind}|${fault.status}|${question}`;
      const used = faultCounts.get(key) ?? 0;
      if (fault.times !== -1 && used >= fault.times) continue;
      faultCounts.set(key, used + 1);
      const headers: Record<string, string> = {};
      if (fault.retryAfter !== undefined) headers['retry-after'] = String(fault.retryAfter);
      if (fault.retryAfterMs !== undefined) headers['retry-after-ms'] = String(fault.retryAfterMs);
      if (fault.shouldRetry !== undefined) headers['x-should-retry'] = String(fault.shouldRetry);
      return error(fault.status, fault.message ?? defaultMessage(fault.status), { headers, latencyMs: scenario.latencyMs, fault });
    }
    if (scenario.contextWindowTokens !== undefined) {
      const estimate = estimateInputTokens(body);
      if (estimate > scenario.contextWindowTokens) return error(400, `prompt is too long: ${estimate} tokens > ${scenario.contextWindowTokens} maximum`);
    }
    if (kind === 'formatter' && scenario.formatterRefusesForcedTool && (body.tool_choice as { type?: string } | undefined)?.type === 'tool') {
      return error(400, "tool_choice of type 'tool' is not supported with this model; use 'auto'");
    }
    const a = answer(name, scenario, body, cachePrefixes);
    const message = {
      id: messageId,
      type: 'message',
      role: 'assistant',
      model: String(body.model),
      content: a.content,
      stop_reason: a.stopReason,
      stop_sequence: a.stopSequence,
      usage: { ...a.usage, cache_creation: a.cacheCreation, inference_geo: null, output_tokens_details: null, server_tool_use: a.serverToolUse, service_tier: 'standard' },
      ...(a.container ? { container: containerOf(body, `${name}|${question}`, startedAt) } : {}),
    };
    return { type: 'message', message, usage: { ...a.usage, cache_creation: a.cacheCreation }, latencyMs: a.latencyMs, streamDelayMs: a.streamDelayMs };
  }

  return {
    place,
    reply,
    reset() {
      faultCounts.clear();
      cachePrefixes.clear();
    },
  };
}

function defaultMessage(status: number): string {
  if (status === 529) return 'Overloaded';
  if (status === 429) return 'Number of request tokens has exceeded your per-minute rate limit';
  if (status === 401) return 'invalid x-api-key';
  if (status === 403) return 'Your API key does not have permission to use the specified resource.';
  if (status >= 500) return 'Internal server error';
  return `error ${status}`;
}
