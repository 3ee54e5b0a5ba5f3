/**
 * A server's questions to the person during a tool call (MCP elicitations) and the person's answers.
 *
 * In the 2026-07-28 revision a tool call may end with `resultType: "input_required"`: its
 * `inputRequests` (each an `elicitation/create`, a form with a schema or a URL to visit) and an
 * opaque `requestState`. The turn waits for a person as it waits for an approval (a record of kind
 * `input`), then sends the same call again, in a new activity, with the answers as
 * `inputResponses` and the `requestState` exactly as received. A decline, and a wait that times
 * out, are sent to the server as `decline` too. The server keeps nothing between the two calls, so
 * the wait survives any worker restart.
 */
import { isRecord } from './is-record';

/** One question of a server: a form to fill in, or a URL to visit and then say done. */
export type InputRequest =
  | { key: string; mode: 'form'; message: string; requestedSchema: Record<string, unknown> }
  | { key: string; mode: 'url'; message: string; url: string; elicitationId?: string };

/** A tool call the server answered with questions for the person. */
export interface InputRequired {
  requests: InputRequest[];
  /** Opaque: sent back exactly with the answers (absent: the server gave none). */
  requestState?: string;
}

/** One answer as the server receives it (an `ElicitResult`). */
export type InputResponse = { action: 'accept'; content?: Record<string, unknown> } | { action: 'decline' };

/** A question asked during a live call (legacy era), as the call's activity tells its turn. */
export interface LiveInputAsked {
  /** The call's tool_use id. */
  callId: string;
  /** Unique per question: the activity finds its answer by it. */
  askId: string;
  requests: InputRequest[];
  /** The longest the call can wait (its request's time left): then the question is declined. */
  timeoutMs: number;
}

/** At most this many rounds of questions per call: a server asking for ever is answered with an error. */
export const MAX_INPUT_ROUNDS = 5;

/** The error a call ends with when its server asks more than {@link MAX_INPUT_ROUNDS} rounds. */
export function tooManyRoundsText(server: string, tool: string): string {
  return `Tool ${server}/${tool} kept asking for input (${MAX_INPUT_ROUNDS} rounds answered); it was stopped.`;
}

/**
 * The questions of an `input_required` result's `inputRequests`, or why they cannot be asked (a
 * request other than an elicitation: sampling and roots are not offered).
 */
export function inputRequestsOf(raw: unknown): { requests: InputRequest[] } | { problem: string } {
  if (!isRecord(raw) || !Object.keys(raw).length) return { problem: 'the server asked for input without saying what' };
  const requests: InputRequest[] = [];
  for (const [key, request] of Object.entries(raw)) {
    if (!isRecord(request) || request.method !== 'elicitation/create' || !isRecord(request.params)) {
      const method = isRecord(request) && typeof request.method === 'string' ? request.method : 'an unknown request';
      return { problem: `the server asked for ${method}, which mcp-turns does not offer (only elicitation/create)` };
    }
    const p = request.params;
    const message = typeof p.message === 'string' ? p.message : '';
    if (p.mode === 'url') {
      if (typeof p.url !== 'string') return { problem: `input request ${key} is a URL elicitation without a url` };
      requests.push({ key, mode: 'url', message, url: p.url, ...(typeof p.elicitationId === 'string' ? { elicitationId: p.elicitationId } : {}) });
    } else {
      if (!isRecord(p.requestedSchema)) return { problem: `input request ${key} is a form without a requestedSchema` };
      requests.push({ key, mode: 'form', message, requestedSchema: p.requestedSchema });
    }
  }
  return { requests };
}

/**
 * What a person's answer to a round of questions is, per request key. One form question takes the
 * form's content itself; several take `{ [key]: content }`. A URL question takes nothing (the
 * person says done).
 */
export function answerContents(requests: readonly InputRequest[], input: Record<string, unknown> | undefined): Record<string, Record<string, unknown> | undefined> {
  const forms = requests.filter((r) => r.mode === 'form');
  const contents: Record<string, Record<string, unknown> | undefined> = {};
  for (const r of requests) {
    if (r.mode === 'url') contents[r.key] = undefined;
    else if (forms.length === 1) contents[r.key] = input ?? {};
    else contents[r.key] = isRecord(input?.[r.key]) ? (input![r.key] as Record<string, unknown>) : {};
  }
  return contents;
}

/** The answers sent to the server: accepted with the person's content, or declined (a decline or a timeout). */
export function inputResponsesOf(
  requests: readonly InputRequest[],
  accepted: boolean,
  input: Record<string, unknown> | undefined,
): Record<string, InputResponse> {
  if (!accepted) return Object.fromEntries(requests.map((r) => [r.key, { action: 'decline' } as const]));
  const contents = answerContents(requests, input);
  return Object.fromEntries(
    requests.map((r) => {
      const content = contents[r.key];
      return [r.key, content !== undefined ? { action: 'accept', content } : { action: 'accept' }] as const;
    }),
  );
}

/** One line saying what a round asks, for lists and logs. */
export function inputRequestSummary(requests: readonly InputRequest[]): string {
  return requests.map((r) => (r.mode === 'url' ? `${r.message} (visit ${r.url})` : r.message)).join(' · ');
}
