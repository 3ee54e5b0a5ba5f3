// The MCP layer: config, the pooled connections with their circuit breakers, result conversion.
export { loadConfig, parseConfig, ConfigError, type McpTurnsConfig, type ServerConfig, type Transport } from './config';
export { McpPool, type CallOptions, type ServerStatus, type PoolEvents } from './pool';
export { CircuitBreaker, type BreakerState, type BreakerOptions } from './circuit-breaker';
export { convertToolResult, capSize } from './result-conversion';
export { silentLogger, type McpLogger } from './logger';
