/**
 * The worker's tools written in code: each module's tools, listed like a server's (allow/exclude
 * applied, input schemas made acceptable to Claude, the approval each needs, the call policy) and
 * called like a server's tool, in this process: the input is checked (and parsed) by the tool's own
 * schema first, `execute` gets the call's id, the turn's id and context and an abortSignal that fires
 * on cancellation and on the module's timeout, and the result becomes Claude's content with a
 * server's size caps. Text that leaves the worker (results, errors, logs) has the values of the
 * worker's credential-named environment variables replaced.
 *
 * Error contract, as a server's (src/mcp/pool.ts): invalid input and a `ToolError` are `is_error`
 * results (never retried); anything else `execute` throws is a retryable `CodeToolFailed`, a call
 * past its timeout a retryable `CodeToolTimeout`; an unknown tool is refused for good.
 */
import { ApplicationFailure } from '@temporalio/common';
import type { CallToolInput, CallToolOutput, McpToolDescriptor, ServerCallPolicy, ServerUnavailable, UnusableTool } from '../core/contracts';
import { stricter } from '../core/approvals';
import { CodeToolFailureType } from '../core/failure-types';
import { toolCallPolicy } from '../core/tool-call-policy';
import { toolApproval } from '../mcp/approval-policy';
import { ArgumentValidator } from '../mcp/argument-validation';
import { claudeInputSchema } from '../mcp/claude-tool-schema';
import { unknownToolFailure } from '../mcp/errors';
import { silentLogger, type McpLogger } from '../mcp/logger';
import { Redactor } from '../mcp/redaction';
import { convertToolResult, type McpCallResult } from '../mcp/result-conversion';
import { ToolSpeed } from '../mcp/tool-speed';
import { readCodeTools, type CodeTool } from './code-tool';
import { CODE_TOOL } from './define-tool';
import { importToolsExport } from './load-tool-module';
import { defaultModuleConfig, type ToolModuleConfig } from './tool-modules-config';

/**
 * A loaded module's tools, decided once: those its allow/exclude lists offer (by name), and their
 * listing (the schema Claude is offered, the approval each needs, those no schema can offer). Or why
 * it has none.
 */
type Loaded = { offered: Map<string, CodeTool>; listed: McpToolDescriptor[]; unusable: UnusableTool[] } | { problem: string };

interface Module {
  config: ToolModuleConfig;
  /** Tools given in code (the plugin's option), instead of a file. */
  given?: unknown;
  loaded?: Loaded;
  speed: ToolSpeed;
}

/** Per-call options (the activity passes its cancellation signal and the turn's id). */
export interface CodeCallOptions {
  signal?: AbortSignal;
  /** The turn's workflow id. */
  turnId: string;
}

/** One module's part of a tool listing. */
export interface ModuleListing {
  tools: McpToolDescriptor[];
  unusable: UnusableTool[];
  policy: ServerCallPolicy;
}

function errorResult(text: string): Omit<CallToolOutput, 'attempt'> {
  return { content: [{ type: 'text', text }], isError: true };
}

function isToolError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[CODE_TOOL] === 'ToolError';
}

/** A module's tools as its config offers them, listed once (see {@link Loaded}). */
function listingOf(config: ToolModuleConfig, tools: readonly CodeTool[]): Loaded {
  const offered = new Map<string, CodeTool>();
  const listed: McpToolDescriptor[] = [];
  const unusable: UnusableTool[] = [];
  for (const tool of tools) {
    if (config.allowedTools && !config.allowedTools.includes(tool.name)) continue;
    if (config.excludeTools.includes(tool.name)) continue;
    offered.set(tool.name, tool);
    const claude = claudeInputSchema(tool.inputSchema);
    if (!claude.ok) {
      unusable.push({ server: config.name, name: tool.name, reason: `input schema cannot be offered to Claude: ${claude.reason}` });
      continue;
    }
    const approval = stricter(toolApproval(config.approval, tool.name), tool.approval);
    listed.push({
      server: config.name,
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      inputSchema: claude.schema,
      ...(approval ? { approval } : {}),
    });
  }
  return { offered, listed, unusable };
}

/** See the file comment. */
export class CodeTools {
  private readonly modules = new Map<string, Module>();
  private readonly validator: ArgumentValidator;
  private readonly redactor: Redactor;
  private loading?: Promise<void>;

  /**
   * @param modules the config's tool modules (loaded by {@link load})
   * @param given tools given in code, by module name (a module's `tools` export)
   * @param secrets values never to let out of the worker (its credential-named environment values)
   */
  constructor(
    modules: ToolModuleConfig[],
    given: Record<string, unknown> = {},
    secrets: Iterable<string> = [],
    private readonly log: McpLogger = silentLogger,
  ) {
    this.validator = new ArgumentValidator((error) => log.warn('tool input schema does not compile; calling without validation', { error }));
    this.redactor = new Redactor(secrets);
    for (const config of modules) this.modules.set(config.name, { config, speed: new ToolSpeed() });
    for (const [name, tools] of Object.entries(given)) {
      if (this.modules.has(name)) throw new Error(`tools given in code as ${name}: the config names a tool module ${name} too`);
      this.modules.set(name, { config: defaultModuleConfig(name), given: tools, speed: new ToolSpeed() });
    }
  }

  /** The module names. */
  get names(): string[] {
    return [...this.modules.keys()];
  }

  has(name: string): boolean {
    return this.modules.has(name);
  }

  /**
   * Loads every module once (later calls wait for the same load). A module that fails to load, or
   * a tool that cannot be read, is one warning naming it and the error; the other tools stay.
   */
  load(): Promise<void> {
    this.loading ??= Promise.all([...this.modules.values()].map((m) => this.loadModule(m))).then(() => undefined);
    return this.loading;
  }

  private async loadModule(m: Module): Promise<void> {
    const where = m.config.path ?? 'given in code';
    let exported: unknown;
    try {
      exported = m.config.path !== undefined ? await importToolsExport(m.config.path) : m.given;
    } catch (err) {
      const problem = `module ${where} did not load: ${this.redactor.redact((err as Error).message?.split('\n')[0] ?? String(err))}`;
      this.log.warn(`tool module ${m.config.name}: ${problem}`, { module: m.config.name });
      m.loaded = { problem };
      return;
    }
    const read = readCodeTools(exported, this.validator);
    for (const problem of read.problems) this.log.warn(`tool module ${m.config.name} (${where}): ${problem}`, { module: m.config.name });
    for (const t of read.tools) {
      if (t.notHonoured.length) this.log.info(`tool ${m.config.name}__${t.name}: not honoured in a durable call: ${t.notHonoured.join('; ')}`, { module: m.config.name });
    }
    m.loaded = read.tools.length || !read.problems.length ? listingOf(m.config, read.tools) : { problem: `module ${where}: ${read.problems.join('; ')}` };
  }

  /** One module's tools, or why it has none. */
  async list(name: string): Promise<ModuleListing | ServerUnavailable> {
    await this.load();
    const m = this.modules.get(name);
    if (!m?.loaded) return { server: name, reason: 'not configured on the worker' };
    if ('problem' in m.loaded) return { server: name, reason: m.loaded.problem };
    const { config } = m;
    const { listed: tools, unusable } = m.loaded;
    const names = tools.map((t) => t.name);
    return {
      tools,
      unusable,
      policy: {
        ...toolCallPolicy(config),
        localTools: m.speed.localTools(names, config.localActivity),
        unseenTools: m.speed.unseenTools(names, config.localActivity),
      },
    };
  }

  /** A tool's result as Claude's content, with the module's size caps and the worker's credentials replaced. */
  private converted(result: McpCallResult, config: ToolModuleConfig, tool: string): Omit<CallToolOutput, 'attempt'> {
    return convertToolResult(result, {
      server: config.name,
      tool,
      maxBytes: config.maxResultBytes,
      maxBinaryBytes: config.maxBinaryBytes,
      ...(this.redactor.empty ? {} : { redact: (t: string) => this.redactor.redact(t) }),
    });
  }

  /** One call: see the file comment for what is returned and what is thrown. */
  async callTool(input: CallToolInput, opts: CodeCallOptions): Promise<Omit<CallToolOutput, 'attempt'>> {
    await this.load();
    const m = this.modules.get(input.server);
    const loaded = m?.loaded;
    if (loaded && 'problem' in loaded) throw ApplicationFailure.create({ type: CodeToolFailureType.Failed, message: `tool module ${input.server}: ${loaded.problem}`, nonRetryable: true });
    const tool = loaded?.offered.get(input.tool);
    if (!m || !tool) throw unknownToolFailure(input.server, input.tool);
    const { config } = m;
    const checked = await tool.check(input.arguments);
    if (!checked.ok) return errorResult(`Invalid arguments for ${input.tool}: ${checked.problems.join('; ')}`);

    // Cancelled before it starts: not run (a listener added now would never hear the abort).
    if (opts.signal?.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error(`${config.name}/${tool.name} cancelled`);

    const started = Date.now();
    const abort = new AbortController();
    const onCancel = (): void => abort.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onCancel, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const stopped = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const timedOut = ApplicationFailure.create({ type: CodeToolFailureType.Timeout, message: `${config.name}/${tool.name} timed out after ${config.timeoutMs} ms`, nonRetryable: false });
        abort.abort(timedOut);
      }, config.timeoutMs);
      abort.signal.addEventListener('abort', () => reject(abort.signal.reason instanceof Error ? abort.signal.reason : new Error(`${config.name}/${tool.name} cancelled`)), { once: true });
    });
    try {
      const result = await Promise.race([tool.run(checked.value, { toolCallId: input.toolUseId, turnId: opts.turnId, context: input.context ?? {}, abortSignal: abort.signal }), stopped]);
      m.speed.record(tool.name, Date.now() - started);
      return this.converted(result, config, tool.name);
    } catch (err) {
      m.speed.record(tool.name, Date.now() - started);
      if (opts.signal?.aborted) throw opts.signal.reason instanceof Error ? opts.signal.reason : err;
      if (err instanceof ApplicationFailure) throw err;
      const message = this.redactor.redact((err as Error)?.message ?? String(err));
      if (isToolError(err)) return this.converted({ content: [{ type: 'text', text: message }], isError: true }, config, tool.name);
      this.log.warn('code tool call failed', { module: config.name, tool: tool.name, toolUseId: input.toolUseId, error: message });
      throw ApplicationFailure.create({ type: CodeToolFailureType.Failed, message: `${config.name}/${tool.name}: ${message}`, nonRetryable: false });
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onCancel);
    }
  }
}
