/**
 * The worker's Anthropic client. It never retries on its own: Temporal owns retries, and the SDK's
 * default (2 retries, each waiting out `retry-after` in full) would stack under them and hide the
 * attempts from the workflow history.
 */
import Anthropic from '@anthropic-ai/sdk';
import { checkClaudeApi, type ClaudeApiSettings } from './api-settings';

export { ClaudeClientConfigError, type ClaudeApiSettings } from './api-settings';

/** The SDK's own default; set explicitly so long non-streamed calls are not refused up front. */
export const DEFAULT_CLAUDE_TIMEOUT_MS = 10 * 60 * 1000;

/** Passed explicitly so the SDK does not read its own environment for it. */
const DEFAULT_BASE_URL = 'https://api.anthropic.com';

/** Placeholder key for a base URL without a key (the local stub model ignores it). */
const NO_KEY = 'no-key-set';

export interface ClaudeClientOptions extends ClaudeApiSettings {
  /** Per HTTP request. @default 600000 */
  timeoutMs?: number;
}

/**
 * Creates the client activities use: `maxRetries: 0`, the API key (else the auth token, for a
 * bearer-token gateway) and base URL of `opts`. Throws {@link ClaudeClientConfigError} when there is
 * neither a key nor a base URL.
 */
export function createClaudeClient(opts: ClaudeClientOptions): Anthropic {
  const { apiKey, authToken: token, baseURL } = checkClaudeApi(opts);
  const authToken = apiKey ? undefined : token;
  // Exactly one credential is passed, so the SDK does not go looking for others (profiles, env).
  const credential = apiKey ? { apiKey } : authToken ? { authToken } : { apiKey: NO_KEY };
  return new Anthropic({
    ...credential,
    baseURL: baseURL ?? DEFAULT_BASE_URL,
    maxRetries: 0,
    timeout: opts.timeoutMs ?? DEFAULT_CLAUDE_TIMEOUT_MS,
  });
}
