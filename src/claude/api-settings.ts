/**
 * Where the Anthropic API is and how to authenticate, and the rule that a process calling Claude
 * needs one of a key, a token or a base URL. Light on purpose: settings are checked in every command
 * without loading the Anthropic SDK.
 */

export interface ClaudeApiSettings {
  /** ANTHROPIC_API_KEY. */
  apiKey?: string;
  /** ANTHROPIC_AUTH_TOKEN: a bearer token for a gateway; used when there is no API key. */
  authToken?: string;
  /** ANTHROPIC_BASE_URL; else https://api.anthropic.com. */
  baseURL?: string;
}

/** Neither an API key nor a base URL is configured. */
export class ClaudeClientConfigError extends Error {
  override name = 'ClaudeClientConfigError';
}

/** `api` with blank values dropped. Throws {@link ClaudeClientConfigError} when it names no key, token or base URL. */
export function checkClaudeApi(api: ClaudeApiSettings): ClaudeApiSettings {
  const apiKey = nonEmpty(api.apiKey);
  const authToken = nonEmpty(api.authToken);
  const baseURL = nonEmpty(api.baseURL);
  if (!apiKey && !authToken && !baseURL) {
    throw new ClaudeClientConfigError(
      'no Claude API key: set ANTHROPIC_API_KEY, or run `mcp-turns stub-model` and set ANTHROPIC_BASE_URL to its URL',
    );
  }
  return { ...(apiKey ? { apiKey } : {}), ...(authToken ? { authToken } : {}), ...(baseURL ? { baseURL } : {}) };
}

function nonEmpty(value: string | undefined): string | undefined {
  const v = value?.trim();
  return v ? v : undefined;
}
