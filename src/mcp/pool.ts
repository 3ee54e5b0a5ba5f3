/**
 * The worker's MCP servers: one shared connection and one circuit breaker per server, tool listing
 * with the allow/exclude filters applied and injected arguments hidden, argument validation before a
 * call, injected values merged in, and results converted for Claude. Breaker state lives here, in
 * the worker process: each worker judges each server on its own.
 *
 * Error contract (what Temporal sees): tool-level failures, invalid arguments and an open circuit
 * are results with `isError: true` (data for Claude, never retried); every other failure is thrown
 * as mapped by src/mcp/errors.ts (transport failures and timeouts retryable, refusals that cannot
 * succeed on retry non-retryable).
 */
import { ApplicationFailure } from '@temporalio/common';
import {
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
  type ElicitRequest,
  type ElicitResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/client';
import type {
  CallToolInput,
  CallToolOutput,
  JsonSchemaObject,
  ListToolsInput,
  ToolListing,
  McpToolDescriptor,
  ServerCallPolicy,
  UnusableTool,
} from '../core/contracts';
import { ArgumentValidator } from './argument-validation';
import { toolApproval } from './approval-policy';
import { CircuitBreaker, type BreakerDecision, type BreakerState } from './circuit-breaker';
import { claudeInputSchema } from './claude-tool-schema';
import { invalidParamHeaders } from './param-headers';
import type { ServerConfig } from './config-schema';
import { serverLogger, silentLogger, type McpLogger } from './logger';
import { serverRedactors, type Redactor } from './redaction';
import { convertToolResult, type McpCallResult } from './result-conversion';
import { ServerConnection } from './server-connection';
import { toolCallPolicy } from '../core/tool-call-policy';
import { ToolSpeed } from './tool-speed';
import { McpFailureType } from '../core/failure-types';
import { toMcpFailure, unknownServerFailure, unknownToolFailure } from './errors';
import { fillContext, missingContextPaths } from '../core/context-templates';
import { answerContents, inputRequestsOf, type InputRequest, type InputRequired } from '../core/input-requests';


/** A tool's listed form: offered to Claude, or left out with the reason. */
type Described = { tool: McpToolDescriptor } | { unusable: string };

/** The `approval` field of a listed tool whose calls wait for a person's approval (none otherwise). */
function approvalOf(config: ServerConfig, tool: string): Pick<McpToolDescriptor, 'approval'> {
  const approval = toolApproval(config.approval, tool);
  return approval ? { approval } : {};
}

/** The schema of a tool that publishes none: any arguments object. */
const ANY_OBJECT: JsonSchemaObject = { type: 'object' };

/** One MCP progress notification. */
export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** Per-call options (the activity passes its cancellation signal and heartbeats on progress). */
export interface CallOptions {
  /** Aborting sends `notifications/cancelled` to the server and rejects the call. */
  signal?: AbortSignal;
  /** Called on each progress notification of the call. */
  onProgress?: (progress: McpProgress) => void;
  /**
   * Asks a person the server's question during the call (the legacy era's `elicitation/create`),
   * within `timeoutMs` (the call's time left); resolves with the answer, or declined. Without it a
   * question is declined.
   */
  onInputRequest?: (requests: InputRequest[], timeoutMs: number) => Promise<{ accepted: boolean; input?: Record<string, unknown> }>;
}

/** Options of {@link McpPool.listTools}. */
export interface ListOptions {
  /** Aborting stops waiting for the servers (they are reported unavailable no more). */
  signal?: AbortSignal;
}

/** One server's health, for the worker's status output and tests. */
export interface ServerStatus {
  server: string;
  transport: ServerConfig['transport'];
  state: BreakerState;
  consecutiveFailures: number;
  /** Times the circuit opened. */
  opens: number;
  /** Breaker state changes. */
  transitions: number;
  /** When the next half-open probe may go (epoch ms), while open. */
  nextProbeAt?: number;
  nextProbeInMs?: number;
  connected: boolean;
  /** The protocol era of the open connection: `modern` (2026-07-28) or `legacy` (2025-11-25). */
  era?: 'legacy' | 'modern';
  /** The stdio server's pid (= its process group id), while connected. */
  pid?: number;
  /** Processes spawned so far (stdio). */
  spawned: number;
  /** Tools listed at the last successful listing (after filters). */
  tools?: number;
}

/** How a call ended, for metrics. */
export type CallOutcome =
  'ok' | 'tool_error' | 'input_required' | 'invalid_args' | 'circuit_open' | 'refused' | 'failed' | 'cancelled';

/** Outcomes of calls the server ran: their durations say how quick a tool is. */
const REACHED_SERVER: ReadonlySet<CallOutcome> = new Set(['ok', 'tool_error', 'input_required', 'failed', 'cancelled']);

/** Hooks for metrics. */
export interface PoolEvents {
  /** Breaker state changes. */
  onBreakerChange?: (server: string, from: BreakerState, to: BreakerState) => void;
  /** Every finished call. */
  onCall?: (server: string, tool: string, outcome: CallOutcome) => void;
}

interface Entry {
  config: ServerConfig;
  connection: ServerConnection;
  breaker: CircuitBreaker;
  log: McpLogger;
  redact: { strict: Redactor; results: Redactor };
  /** How quick its tools' recent calls were: which run as local activities. */
  speed: ToolSpeed;
  /** Tools listed at the last successful listing. */
  toolCount?: number;
  /** allowed_tools names already reported missing (warned once, not every turn). */
  reportedMissing?: string;
  /** Calls running now that can ask a person (legacy-era questions arrive on the connection, not the call). */
  askers: Set<{ startedAt: number; ask: NonNullable<CallOptions['onInputRequest']> }>;
}

function unavailableReason(decision: Extract<BreakerDecision, { allowed: false }>): string {
  return decision.state === 'open'
    ? `circuit open, next probe in ${Math.ceil(decision.retryInMs / 1000)} s`
    : 'circuit half-open, a probe is in progress';
}

/** A live question is answered this long before the call's request would time out. */
const LIVE_ANSWER_MARGIN_MS = 2000;

/** A result without content: what a call the server answered with questions returns besides them. */
const EMPTY_RESULT: Omit<CallToolOutput, 'attempt'> = { content: [], isError: false, artifacts: [], truncatedBytes: 0 };

/**
 * The server's questions when it answered `input_required` (or why they cannot be asked); undefined
 * for a complete result.
 */
function inputRequiredOf(result: unknown): InputRequired | { problem: string } | undefined {
  const r = result as { resultType?: unknown; inputRequests?: unknown; requestState?: unknown };
  if (r?.resultType !== 'input_required') return undefined;
  const asked = inputRequestsOf(r.inputRequests);
  if ('problem' in asked) return asked;
  return { requests: asked.requests, ...(typeof r.requestState === 'string' ? { requestState: r.requestState } : {}) };
}

function errorResult(text: string): Omit<CallToolOutput, 'attempt'> {
  return { content: [{ type: 'text', text }], isError: true, artifacts: [], truncatedBytes: 0 };
}

/** Why a server whose `inject` needs context values the turn does not set cannot serve it. */
function contextMissingReason(paths: string[]): string {
  return `its inject needs ${paths.map((p) => `context.${p}`).join(', ')}, which this turn does not set (give the turn a context with ${paths.length > 1 ? 'them' : 'it'})`;
}

/** Rejects after `ms` or when `signal` aborts, whichever is first; the work itself goes on. */
function deadline<T>(work: Promise<T>, ms: number, what: string, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SdkError(SdkErrorCode.RequestTimeout, `${what} timed out after ${ms} ms`)),
      ms,
    );
    onAbort = () => reject(signal?.reason instanceof Error ? signal.reason : new Error(`${what} cancelled`));
    if (signal?.aborted) onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, stop]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  });
}

/** See the file comment. */
export class McpPool {
  private readonly entries = new Map<string, Entry>();
  private readonly validator: ArgumentValidator;
  /** Listed form of each tool object (made once per listing of a server). */
  private readonly described = new WeakMap<McpTool, Described>();
  private closed = false;

  /**
   * @param servers the config's servers (nothing is started until first use)
   * @param log structured logger (the worker passes Temporal's Runtime logger)
   * @param events metrics hooks
   */
  constructor(
    servers: ServerConfig[],
    private readonly log: McpLogger = silentLogger,
    private readonly events: PoolEvents = {},
  ) {
    this.validator = new ArgumentValidator((error) =>
      log.warn('tool input schema does not compile; calling without validation', { error }),
    );
    for (const config of servers) {
      const redact = serverRedactors(config);
      const slog = serverLogger(log, config.name, redact.strict);
      const connection = new ServerConnection(config, slog);
      const breaker = new CircuitBreaker(config.breaker, ({ from, to, consecutiveFailures, cooldownMs }) => {
        const fields = { from, to, consecutiveFailures, ...(cooldownMs !== undefined ? { cooldownMs } : {}) };
        if (to === 'open') {
          slog.warn('mcp circuit breaker opened', fields);
          // A server that keeps failing may be hung behind an open socket or pipe: the probe starts fresh.
          connection.drop();
        } else {
          slog.info(`mcp circuit breaker ${to}`, fields);
        }
        events.onBreakerChange?.(config.name, from, to);
      });
      const entry: Entry = { config, connection, breaker, log: slog, redact, speed: new ToolSpeed(), askers: new Set() };
      connection.onElicitation = (params) => this.elicit(entry, params);
      this.entries.set(config.name, entry);
    }
  }

  /** The configured server names. */
  get serverNames(): string[] {
    return [...this.entries.keys()];
  }

  /** How the workflow schedules a server's calls (nothing secret in it). */
  static policy(config: ServerConfig): ServerCallPolicy {
    return toolCallPolicy(config);
  }

  /**
   * The tools of the asked servers (all by default), all pages, filtered, their input schemas made
   * acceptable to Claude with the injected arguments removed, with each listed server's call
   * policy. A tool whose schema cannot be made acceptable is reported in `unusableTools`, never in
   * `tools`. Servers that fail, time out (each within its `listTimeoutMs`) or have an open circuit
   * are reported in `unavailable`; this never throws for a server's sake. A tool whose calls wait
   * for a person's approval under its server's `approval` policy carries that requirement.
   */
  async listTools(input: ListToolsInput = {}, opts: ListOptions = {}): Promise<ToolListing> {
    if (this.closed) throw new Error('the MCP pool is closed (worker shutting down)');
    const names = input.servers ?? this.serverNames;
    const out: ToolListing & { unusableTools: UnusableTool[] } = {
      tools: [],
      policies: {},
      unavailable: [],
      unknownServers: names.filter((n) => !this.entries.has(n)),
      unusableTools: [],
    };
    const known = [...new Set(names)].flatMap((n) => {
      const entry = this.entries.get(n);
      return entry ? [entry] : [];
    });
    const listed = await Promise.all(
      known.map((entry) => {
        const missing = missingContextPaths(entry.config.inject, input.context);
        return missing.length ? { reason: contextMissingReason(missing) } : this.listServer(entry, opts.signal);
      }),
    );
    known.forEach((entry, i) => {
      const r = listed[i]!;
      if ('reason' in r) {
        out.unavailable.push({ server: entry.config.name, reason: r.reason });
        return;
      }
      out.tools.push(...r.tools);
      out.unusableTools.push(...r.unusable);
      const names = r.tools.map((t) => t.name);
      out.policies[entry.config.name] = {
        ...McpPool.policy(entry.config),
        localTools: entry.speed.localTools(names, entry.config.localActivity),
        unseenTools: entry.speed.unseenTools(names, entry.config.localActivity),
      };
    });
    return out;
  }

  private async listServer(
    entry: Entry,
    signal?: AbortSignal,
  ): Promise<{ tools: McpToolDescriptor[]; unusable: UnusableTool[] } | { reason: string }> {
    const decision = entry.breaker.request();
    if (!decision.allowed) return { reason: unavailableReason(decision) };
    try {
      const all = await deadline(
        entry.connection.tools({ force: decision.probe }),
        entry.config.listTimeoutMs,
        'tools/list',
        signal,
      );
      entry.breaker.onSuccess();
      const visible = all.filter((t) => this.visible(entry.config, t));
      const missing = (entry.config.allowedTools ?? []).filter((name) => !all.some((t) => t.name === name));
      if (missing.length && entry.reportedMissing !== missing.join()) {
        entry.reportedMissing = missing.join();
        entry.log.warn('allowed_tools names tools the server does not have', { missing });
      }
      entry.toolCount = visible.length;
      // Calls copy x-mcp-header arguments into Mcp-Param-* headers: 2026-07-28 over HTTP, as the SDK does.
      const headers = entry.connection.era === 'modern' && entry.config.transport !== 'stdio';
      const tools: McpToolDescriptor[] = [];
      const unusable: UnusableTool[] = [];
      for (const t of visible) {
        const described = this.describe(entry.config, t, headers);
        if ('tool' in described) tools.push(described.tool);
        else unusable.push({ server: entry.config.name, name: t.name, reason: described.unusable });
      }
      if (unusable.length) entry.log.warn('mcp tools not offered to Claude', { tools: unusable.map((u) => `${u.name}: ${u.reason}`) });
      return { tools, unusable };
    } catch (err) {
      if (signal?.aborted) {
        entry.breaker.onAbandon(decision.probe);
        throw err;
      }
      if (err instanceof ProtocolError && err.code === ProtocolErrorCode.MethodNotFound) {
        entry.breaker.onSuccess(); // alive, just without tools
        entry.toolCount = 0;
        return { tools: [], unusable: [] };
      }
      entry.breaker.onFailure(decision.probe);
      // A server that cannot list its tools in time is hung: the next listing starts a fresh connection.
      entry.connection.drop();
      const reason = entry.redact.strict.redact((err as Error).message);
      entry.log.warn('mcp tools/list failed', { error: reason });
      return { reason };
    }
  }

  /** Listed and callable: allowed, not excluded, and not a tool that requires the tasks API. */
  private visible(config: ServerConfig, tool: McpTool): boolean {
    if (config.allowedTools && !config.allowedTools.includes(tool.name)) return false;
    if (config.excludeTools.includes(tool.name)) return false;
    return tool.execution?.taskSupport !== 'required';
  }

  /**
   * The tool as Claude sees it: its input schema in a form the Messages API accepts, never asking
   * for (or telling about) the arguments the worker injects; or why it cannot be offered. Where
   * calls copy arguments into headers (`headers`), a tool whose `x-mcp-header` annotations break
   * the 2026-07-28 rule is left out, as that revision requires.
   */
  private describe(config: ServerConfig, tool: McpTool, headers: boolean): Described {
    const cached = this.described.get(tool);
    if (cached) return cached;
    const badHeaders = headers ? invalidParamHeaders(tool.inputSchema) : undefined;
    const claude = badHeaders ? undefined : claudeInputSchema(tool.inputSchema, { hidden: Object.keys(config.inject) });
    let described: Described;
    if (!claude) described = { unusable: `breaks the 2026-07-28 header rule: ${badHeaders}` };
    else if (!claude.ok) described = { unusable: `input schema cannot be offered to Claude: ${claude.reason}` };
    else {
      described = {
        tool: {
          server: config.name,
          name: tool.name,
          ...(tool.title ? { title: tool.title } : {}),
          ...(tool.description ? { description: tool.description } : {}),
          inputSchema: claude.schema,
          ...approvalOf(config, tool.name),
        },
      };
    }
    this.described.set(tool, described);
    return described;
  }

  /** The tool, from the cached list; a miss re-lists once (the list may have changed). */
  private async findTool(entry: Entry, name: string, force: boolean): Promise<McpTool | undefined> {
    const find = async (): Promise<McpTool | undefined> =>
      (await entry.connection.tools({ force, stale: true })).find((t) => t.name === name);
    let tool = await find();
    if (!tool) {
      entry.connection.invalidateTools();
      tool = await find();
    }
    return tool && this.visible(entry.config, tool) ? tool : undefined;
  }

  /**
   * One tool call: see the file comment for what is returned and what is thrown. The server's
   * `inject` values are merged into the arguments last, so Claude cannot override them, and the
   * result is validated against the schema the server published (not the form Claude was shown)
   * before the call; no call is made when it is invalid.
   */
  async callTool(input: CallToolInput, opts: CallOptions = {}): Promise<Omit<CallToolOutput, 'attempt'>> {
    if (this.closed) throw new Error('the MCP pool is closed (worker shutting down)');
    const entry = this.entries.get(input.server);
    if (!entry) throw unknownServerFailure(input.server);
    const { config, breaker, log } = entry;
    const started = Date.now();
    const finish = (outcome: CallOutcome, fields: Record<string, unknown> = {}): void => {
      this.events.onCall?.(config.name, input.tool, outcome);
      if (REACHED_SERVER.has(outcome)) entry.speed.record(input.tool, Date.now() - started);
      const level = outcome === 'failed' ? 'warn' : 'debug';
      log[level]('mcp tool call', {
        tool: input.tool,
        toolUseId: input.toolUseId,
        outcome,
        ms: Date.now() - started,
        ...fields,
      });
    };

    const decision = breaker.request();
    if (!decision.allowed) {
      finish('circuit_open');
      return errorResult(`server ${config.name} is unavailable (${unavailableReason(decision)})`);
    }
    try {
      const tool = await this.findTool(entry, input.tool, decision.probe);
      if (!tool) {
        breaker.onSuccess(); // the server listed its tools: it is alive
        finish('refused', { reason: 'unknown tool' });
        throw unknownToolFailure(config.name, input.tool);
      }
      const missing = missingContextPaths(config.inject, input.context);
      if (missing.length) {
        breaker.onAbandon(decision.probe);
        finish('invalid_args');
        return errorResult(`server ${config.name} is unavailable to this turn: ${contextMissingReason(missing)}`);
      }
      const args = { ...input.arguments, ...fillContext(config.inject, input.context) };
      const check = this.validator.check((tool.inputSchema as JsonSchemaObject | undefined) ?? ANY_OBJECT, args);
      if (!check.ok) {
        breaker.onAbandon(decision.probe);
        finish('invalid_args');
        return errorResult(`Invalid arguments for ${input.tool}: ${check.problems.join('; ')}`);
      }
      const params = {
        name: input.tool,
        arguments: args,
        ...(input.inputResponses ? { inputResponses: input.inputResponses } : {}),
        ...(input.requestState !== undefined ? { requestState: input.requestState } : {}),
      };
      const asker = opts.onInputRequest ? { startedAt: Date.now(), ask: opts.onInputRequest } : undefined;
      if (asker) entry.askers.add(asker);
      const result = (await entry.connection.request(
        (client) =>
          client.callTool(params, {
            // A server's questions come back to the turn, which asks a person (never answered here).
            allowInputRequired: true,
            // The listed definition: its x-mcp-header arguments are mirrored into Mcp-Param-* headers
            // (2026-07-28 over HTTP). Results are converted as they come, never checked against an
            // output schema (a server whose result departs from its own schema still answers).
            toolDefinition: { ...tool, outputSchema: undefined },
            timeout: config.timeoutMs,
            resetTimeoutOnProgress: true,
            maxTotalTimeout: config.maxTotalTimeoutMs,
            ...(opts.signal ? { signal: opts.signal } : {}),
            ...(opts.onProgress ? { onprogress: (p: McpProgress) => opts.onProgress?.(p) } : {}),
          }),
        { force: decision.probe, ...(opts.signal ? { signal: opts.signal } : {}) },
      ).finally(() => asker && entry.askers.delete(asker))) as McpCallResult;
      breaker.onSuccess();
      const asked = inputRequiredOf(result);
      if (asked) {
        finish('input_required');
        return 'problem' in asked ? errorResult(`${config.name}/${input.tool}: ${asked.problem}`) : { ...EMPTY_RESULT, inputRequired: asked };
      }
      const out = convertToolResult(result, {
        server: config.name,
        tool: input.tool,
        maxBytes: config.maxResultBytes,
        maxBinaryBytes: config.maxBinaryBytes,
        redact: entry.redact.results.empty ? undefined : (t) => entry.redact.results.redact(t),
      });
      finish(
        out.isError ? 'tool_error' : 'ok',
        out.truncatedBytes ? { truncatedBytes: out.truncatedBytes } : {},
      );
      return out;
    } catch (err) {
      if (err instanceof ApplicationFailure) throw err;
      const message = entry.redact.strict.redact(`${config.name}/${input.tool}: ${(err as Error).message}`);
      if (opts.signal?.aborted) {
        breaker.onAbandon(decision.probe);
        finish('cancelled');
        // The activity's own cancellation (Temporal's CancelledFailure), not the SDK's wrapper of it.
        throw opts.signal.reason instanceof Error ? opts.signal.reason : err;
      }
      const failure = toMcpFailure(err, message);
      const refused = failure.type === McpFailureType.InvalidRequest;
      // The server answered (a refusal, or e.g. an internal error a retry may get past): it is alive.
      if (refused || failure.type === McpFailureType.ServerError) breaker.onSuccess();
      else breaker.onFailure(decision.probe);
      finish(refused ? 'refused' : 'failed', { error: message });
      throw failure;
    }
  }

  /**
   * A legacy-era server's question during a live call: put to the person by the call that is
   * running (one call of this server at a time can be told apart: with several running, the
   * question cannot be attributed and is declined), within the call's time left.
   */
  private async elicit(entry: Entry, params: ElicitRequest['params']): Promise<ElicitResult> {
    const asked = inputRequestsOf({ question: { method: 'elicitation/create', params } });
    const askers = [...entry.askers];
    if ('problem' in asked || askers.length !== 1) {
      entry.log.warn('mcp server asked for input that cannot be put to a person; declined', {
        reason: 'problem' in asked ? asked.problem : `${askers.length} calls of this server are running`,
      });
      return { action: 'decline' };
    }
    const asker = askers[0]!;
    const timeoutMs = Math.max(1000, asker.startedAt + entry.config.timeoutMs - Date.now() - LIVE_ANSWER_MARGIN_MS);
    const answer = await asker.ask(asked.requests, timeoutMs);
    if (!answer.accepted) return { action: 'decline' };
    const content = answerContents(asked.requests, answer.input).question;
    return content !== undefined ? { action: 'accept', content: content as ElicitResult['content'] } : { action: 'accept' };
  }

  /** Per-server health: breaker state and counts, connection, pid, tools. */
  status(): ServerStatus[] {
    const now = Date.now();
    return [...this.entries.values()].map(({ config, connection, breaker, toolCount }) => {
      const next = breaker.nextProbeAt;
      const pid = connection.pid;
      const era = connection.era;
      return {
        server: config.name,
        transport: config.transport,
        state: breaker.state,
        consecutiveFailures: breaker.consecutiveFailures,
        opens: breaker.opens,
        transitions: breaker.transitions,
        ...(next !== undefined ? { nextProbeAt: next, nextProbeInMs: Math.max(0, next - now) } : {}),
        connected: connection.connected,
        ...(era !== undefined ? { era } : {}),
        ...(pid !== undefined ? { pid } : {}),
        spawned: connection.spawned,
        ...(toolCount !== undefined ? { tools: toolCount } : {}),
      };
    });
  }

  /** Closes every connection and waits: stdio servers' whole process groups are stopped. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.entries.values()].map((e) => e.connection.close()));
  }
}
