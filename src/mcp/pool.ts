/**
 * The worker's MCP servers: one shared connection per server, a circuit breaker per server, tool
 * listing with allow/exclude filters and injected arguments hidden, argument validation before a
 * call, and results converted for Claude. Breaker state lives here, in the worker process: each
 * worker judges each server on its own.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { ApplicationFailure } from '@temporalio/common';
import { ErrorCode, McpError, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  CallToolInput,
  CallToolOutput,
  JsonSchemaObject,
  ListToolsInput,
  ListToolsOutput,
  McpToolDescriptor,
  ServerCallPolicy,
} from '../core/contracts';
import type { ServerConfig } from './config';
import { CircuitBreaker, type BreakerState } from './circuit-breaker';
import { silentLogger, type McpLogger } from './logger';
import { convertToolResult, type McpCallResult } from './result-conversion';
import { ServerConnection } from './server-connection';

export interface CallOptions {
  signal?: AbortSignal;
  /** Called on each MCP progress notification (the activity heartbeats). */
  onProgress?: () => void;
}

export interface ServerStatus {
  server: string;
  transport: string;
  state: BreakerState;
  consecutiveFailures: number;
  opens: number;
  nextProbeInMs?: number;
  connected: boolean;
  pid?: number;
  spawned: number;
  tools?: number;
}

export interface PoolEvents {
  /** Breaker state changes (for logs and metrics). */
  onBreakerChange?: (server: string, from: BreakerState, to: BreakerState) => void;
  /** Every finished call (for metrics). */
  onCall?: (server: string, tool: string, outcome: 'ok' | 'tool_error' | 'invalid_args' | 'circuit_open' | 'failed') => void;
}

interface Entry {
  connection: ServerConnection;
  breaker: CircuitBreaker;
  validators: Map<string, ValidateFunction | null>;
  toolCount?: number;
}

/** Transport failures and timeouts: these count against the breaker and are retried by Temporal. */
function isProtocolRefusal(err: unknown): boolean {
  return err instanceof McpError && (err.code === ErrorCode.InvalidParams || err.code === ErrorCode.MethodNotFound || err.code === ErrorCode.InvalidRequest);
}

export class McpPool {
  private readonly entries = new Map<string, Entry>();
  private readonly ajv = addFormats(new Ajv({ allErrors: true, strict: false, validateSchema: false }));

  constructor(
    servers: ServerConfig[],
    private readonly log: McpLogger = silentLogger,
    private readonly events: PoolEvents = {},
  ) {
    for (const config of servers) {
      const breaker = new CircuitBreaker(config.breaker, ({ from, to, consecutiveFailures }) => {
        const fields = { server: config.name, from, to, consecutiveFailures };
        if (to === 'open') log.warn('circuit breaker opened', fields);
        else log.info(`circuit breaker ${to}`, fields);
        events.onBreakerChange?.(config.name, from, to);
      });
      this.entries.set(config.name, { connection: new ServerConnection(config, log), breaker, validators: new Map() });
    }
  }

  get serverNames(): string[] {
    return [...this.entries.keys()];
  }

  /** The scheduling policy the workflow uses for a server's calls (nothing secret in it). */
  policy(config: ServerConfig): ServerCallPolicy {
    return {
      // Above the MCP request timeout, so the MCP layer times out (and says so) first.
      startToCloseTimeoutMs: config.timeoutMs + 10_000,
      heartbeatTimeoutMs: config.heartbeatTimeoutMs,
      retry: { ...config.retry },
    };
  }

  async listTools(input: ListToolsInput = {}): Promise<ListToolsOutput> {
    const names = input.servers ?? this.serverNames;
    const unknownServers = names.filter((n) => !this.entries.has(n));
    const out: ListToolsOutput = { tools: [], policies: {}, unavailable: [], unknownServers };
    const listed = await Promise.all(
      names.filter((n) => this.entries.has(n)).map(async (name) => {
        const entry = this.entries.get(name)!;
        const decision = entry.breaker.request();
        if (!decision.allowed) {
          return { name, error: `circuit open, next probe in ${Math.ceil(decision.retryInMs / 1000)} s` };
        }
        try {
          const tools = await this.withTimeout(entry.connection.tools(), entry.connection.config.timeoutMs, `tools/list on ${name}`);
          entry.breaker.onSuccess();
          return { name, tools };
        } catch (err) {
          entry.breaker.onFailure();
          entry.connection.drop();
          return { name, error: (err as Error).message };
        }
      }),
    );
    for (const r of listed) {
      const config = this.entries.get(r.name)!.connection.config;
      if ('error' in r) {
        out.unavailable.push({ server: r.name, reason: r.error ?? 'unavailable' });
        continue;
      }
      const visible = r.tools.filter(
        (t) => (!config.allowedTools || config.allowedTools.includes(t.name)) && !config.excludeTools.includes(t.name),
      );
      this.entries.get(r.name)!.toolCount = visible.length;
      out.tools.push(...visible.map((t) => this.describe(config, t)));
      out.policies[r.name] = this.policy(config);
    }
    return out;
  }

  /** Claude never sees (or is asked for) the arguments the worker injects. */
  private describe(config: ServerConfig, tool: McpTool): McpToolDescriptor {
    const schema = JSON.parse(JSON.stringify(tool.inputSchema ?? { type: 'object' })) as JsonSchemaObject;
    schema.type = 'object';
    for (const key of Object.keys(config.inject)) {
      if (schema.properties) delete schema.properties[key];
      if (schema.required) schema.required = schema.required.filter((r) => r !== key);
    }
    return {
      server: config.name,
      name: tool.name,
      ...(tool.title ? { title: tool.title } : {}),
      ...(tool.description ? { description: tool.description } : {}),
      inputSchema: schema,
    };
  }

  private async validator(entry: Entry, tool: string): Promise<ValidateFunction | null | undefined> {
    if (entry.validators.has(tool)) return entry.validators.get(tool);
    const tools = await entry.connection.tools();
    const found = tools.find((t) => t.name === tool);
    if (!found) return undefined;
    const schema = this.describe(entry.connection.config, found).inputSchema;
    let fn: ValidateFunction | null = null;
    try {
      fn = this.ajv.compile(schema);
    } catch (err) {
      this.log.warn('tool input schema does not compile; calling without validation', { server: entry.connection.config.name, tool, error: (err as Error).message });
    }
    entry.validators.set(tool, fn);
    return fn;
  }

  /**
   * One tool call. Tool-level failures, bad arguments and an open circuit come back as `isError`
   * results (data for Claude); transport failures and timeouts throw, so Temporal retries them;
   * refusals that cannot succeed on retry throw non-retryable.
   */
  async callTool(input: CallToolInput, opts: CallOptions = {}): Promise<CallToolOutput> {
    const entry = this.entries.get(input.server);
    if (!entry) {
      throw ApplicationFailure.create({ type: 'McpUnknownServer', nonRetryable: true, message: `server ${input.server} is not configured on this worker` });
    }
    const config = entry.connection.config;
    const text = (t: string): CallToolOutput => ({ content: [{ type: 'text', text: t }], isError: true, artifacts: [], truncatedBytes: 0 });
    const decision = entry.breaker.request();
    if (!decision.allowed) {
      this.events.onCall?.(input.server, input.tool, 'circuit_open');
      return text(`server ${input.server} is unavailable (circuit open, next probe in ${Math.ceil(decision.retryInMs / 1000)} s)`);
    }
    try {
      const validate = await this.validator(entry, input.tool);
      if (validate === undefined) {
        entry.breaker.onSuccess();
        this.events.onCall?.(input.server, input.tool, 'invalid_args');
        return text(`Unknown tool ${input.tool} on server ${input.server}`);
      }
      if (validate && !validate(input.arguments)) {
        entry.breaker.onSuccess();
        this.events.onCall?.(input.server, input.tool, 'invalid_args');
        const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '(arguments)'} ${e.message ?? ''}`.trim());
        return text(`Invalid arguments for ${input.tool}: ${problems.join('; ')}`);
      }
      const args = { ...input.arguments, ...config.inject };
      const result = (await this.request(entry, input.tool, args, opts)) as McpCallResult;
      entry.breaker.onSuccess();
      const out = convertToolResult(result, { server: input.server, tool: input.tool, maxBytes: config.maxResultBytes });
      this.events.onCall?.(input.server, input.tool, out.isError ? 'tool_error' : 'ok');
      return out;
    } catch (err) {
      if (opts.signal?.aborted) {
        entry.breaker.onAbandon();
        throw err;
      }
      if (isProtocolRefusal(err)) {
        entry.breaker.onSuccess(); // the server answered: it is alive
        this.events.onCall?.(input.server, input.tool, 'failed');
        throw ApplicationFailure.create({
          type: 'McpInvalidRequest',
          nonRetryable: true,
          message: `${input.server}/${input.tool} refused the call: ${(err as Error).message}`,
        });
      }
      entry.breaker.onFailure();
      this.events.onCall?.(input.server, input.tool, 'failed');
      throw new Error(`${input.server}/${input.tool}: ${(err as Error).message}`);
    }
  }

  /** The MCP request, re-initialising once when an HTTP server has forgotten our session (404). */
  private async request(entry: Entry, tool: string, args: Record<string, unknown>, opts: CallOptions): Promise<unknown> {
    const config = entry.connection.config;
    for (let attempt = 0; ; attempt++) {
      const client = await entry.connection.get();
      try {
        return await client.callTool({ name: tool, arguments: args }, undefined, {
          timeout: config.timeoutMs,
          resetTimeoutOnProgress: true,
          maxTotalTimeout: config.timeoutMs * 10,
          ...(opts.signal ? { signal: opts.signal } : {}),
          ...(opts.onProgress ? { onprogress: () => opts.onProgress?.() } : {}),
        });
      } catch (err) {
        const staleSession = err instanceof StreamableHTTPError && err.code === 404;
        const closed = err instanceof McpError && err.code === ErrorCode.ConnectionClosed;
        if ((staleSession || closed) && attempt === 0 && !opts.signal?.aborted) {
          this.log.info(staleSession ? 'HTTP session expired; re-initialising' : 'connection closed; reconnecting', { server: config.name });
          entry.connection.drop();
          continue;
        }
        if (closed || (err instanceof Error && !(err instanceof McpError))) entry.connection.drop();
        throw err;
      }
    }
  }

  private withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
    return Promise.race([
      p,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms).unref()),
    ]);
  }

  status(): ServerStatus[] {
    return [...this.entries.entries()].map(([server, e]) => {
      const next = e.breaker.nextProbeAt;
      return {
        server,
        transport: e.connection.config.transport,
        state: e.breaker.state,
        consecutiveFailures: e.breaker.consecutiveFailures,
        opens: e.breaker.opens,
        ...(next !== undefined ? { nextProbeInMs: Math.max(0, next - Date.now()) } : {}),
        connected: e.connection.connected,
        ...(e.connection.pid !== undefined ? { pid: e.connection.pid } : {}),
        spawned: e.connection.spawned,
        ...(e.toolCount !== undefined ? { tools: e.toolCount } : {}),
      };
    });
  }

  /** Closes every connection; stdio servers' whole process groups are stopped. */
  async close(): Promise<void> {
    await Promise.all([...this.entries.values()].map((e) => e.connection.close()));
  }
}
