// The MCP layer (worker-side): its servers' config entries, the pooled connections with their circuit
// breakers, result conversion. Named exports only.
export { parseMcpServers, type McpServersResult, type ServersKey } from './config';
export {
  ServerEntrySchema,
  SERVER_DEFAULTS,
  type ServerConfig,
  type ServerEntry,
  type Transport,
} from './config-schema';
export {
  McpPool,
  type CallOptions,
  type CallOutcome,
  type ListOptions,
  type McpProgress,
  type PoolEvents,
  type ServerStatus,
} from './pool';
export {
  CircuitBreaker,
  type BreakerDecision,
  type BreakerOptions,
  type BreakerState,
  type BreakerTransition,
} from './circuit-breaker';
export { convertToolResult, capText, type ConversionOptions, type McpCallResult } from './result-conversion';
export { ArgumentValidator, type ArgumentCheck } from './argument-validation';
export { Redactor, REDACTED } from './redaction';
export { FileTokenStore, MemoryTokenStore, type OAuthRecord, type TokenStore } from './oauth-token-store';
export { AuthorizationRequiredError } from './oauth-provider';
export { authorizeServer, type AuthorizeOptions, type AuthorizeResult } from './oauth-authorization';
export { silentLogger, type McpLogger } from './logger';
