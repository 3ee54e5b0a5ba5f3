/**
 * The worker's Anthropic client. It never retries on its own: Temporal owns retries, and the SDK's
 * default (2 retries, each waiting out `retry-after` in full) would stack under them and hide the
 * attempts from the workflow history.
 */
import Anthropic from '@anthropic-ai/sdk';

/** The SDK's own default; set explicitly so long non-streamed calls are not refused up front. */
export const DEFAULT_CLAUDE_TIMEOUT_MS = 10 * 60 * 1000;

/** Passed explicitly so the SDK does not read its own environment for it. */
const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** Placeholder key for a base URL without a key (the local stub model ignores it). */
const NO_KEY = 'no-key-set';

export interface ClaudeClientOptions {
  /** @default process.env.ANTHROPIC_API_KEY */
  apiKey?: string;
  /** @default process.env.ANTHROPIC_BASE_URL, else https://api.anthropic.com */
  baseURL?: string;
  /** Per HTTP request. @default 600000 */
  timeoutMs?: number;
  /** Where ANTHROPIC_* are read from. @default process.env */
  env?: NodeJS.ProcessEnv;
}

/** Neither an API key nor a base URL is configured. */
export class ClaudeClientConfigError extends Error {
  override name = 'ClaudeClientConfigError';
}

/**
 * Creates the client activities use: `maxRetries: 0`, key from ANTHROPIC_API_KEY (or
 * ANTHROPIC_AUTH_TOKEN for a bearer-token gateway), base URL from ANTHROPIC_BASE_URL. Throws
 * {@link ClaudeClientConfigError} when there is neither a key nor a base URL.
 */
export function createClaudeClient(opts: ClaudeClientOptions = {}): Anthropic {
  const env = opts.env ?? process.env;
  const apiKey = nonEmpty(opts.apiKey) ?? nonEmpty(env.ANTHROPIC_API_KEY);
  const authToken = apiKey ? undefined : nonEmpty(env.ANTHROPIC_AUTH_TOKEN);
  const baseURL = nonEmpty(opts.baseURL) ?? nonEmpty(env.ANTHROPIC_BASE_URL);
  if (!apiKey && !authToken && !baseURL) {
    throw new ClaudeClientConfigError(
      'no Claude API key: set ANTHROPIC_API_KEY, or run `mcp-turns stub-model` and set ANTHROPIC_BASE_URL to its URL',
    );
  }
  // Exactly one credential is passed, so the SDK does not go looking for others (profiles, env).
  const credential = apiKey ? { apiKey } : authToken ? { authToken } : { apiKey: NO_KEY };
  return new Anthropic({
    ...credential,
    baseURL: baseURL ?? DEFAULT_BASE_URL,
    maxRetries: 0,
    timeout: opts.timeoutMs ?? DEFAULT_CLAUDE_TIMEOUT_MS,
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}
