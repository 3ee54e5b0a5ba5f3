/**
 * The usage a stub answer reports, and the token estimate it is made of: a request's or a content's
 * JSON bytes divided by 4.
 */

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** `usage.cache_creation`: the tokens written to the cache, by the ttl they were written with; the two add up to `cache_creation_input_tokens`. */
export interface CacheCreation {
  ephemeral_5m_input_tokens: number;
  ephemeral_1h_input_tokens: number;
}

/** Tokens of a JSON value: its UTF-8 bytes divided by 4, rounded up. */
export const tokens = (value: unknown): number => Math.ceil(Buffer.byteLength(JSON.stringify(value ?? null)) / 4);

/** A request's input tokens: those of its `system`, `messages` and `tools`. */
export function estimateInputTokens(body: Record<string, unknown>): number {
  return tokens({ system: body.system, messages: body.messages, tools: body.tools });
}
