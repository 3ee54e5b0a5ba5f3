/**
 * The flags that shape a turn, shared by `run` and `chat`, and the one mapping from them to the
 * turn's input: `--server`, `--toolset`, `--context`, `--server-tool`, `--model`, `--system`, `--max-steps`,
 * `--max-tools`, `--tool-search`, `--allow`, `--deny`, `--require-approval`, `--approval-timeout` and
 * `--no-format`. `batch` shares `--toolset`, `--context` and `--server-tool` (its lines' defaults). A bad flag is one
 * line naming it, with exit code 2, before anything is started.
 */
import type { Command } from 'commander';
import type { TurnOptions } from '../core/conversation';
import { MAX_TOOLS_PER_REQUEST } from '../core/input-limits';
import { oneLine } from '../core/text';
import { SERVER_TOOL_KEYS, type ServerToolKey, type ServerToolsInput, type ToolSearchMode } from '../core/server-tools';

const TOOL_SEARCH_MODES: readonly ToolSearchMode[] = ['auto', 'regex', 'bm25', 'off'];
import { ChatTurnInputError, ContextKeySchema, type ChatTurnInput } from '../schemas/turn-input';
import { parseTurnOptions } from '../schemas/turn-options';
import { CliError, parsePositiveInt } from './cli-error';
import { EXIT } from './exit-codes';

/** `--toolset`, `--context` and `--server-tool` as commander gives them: `run`, `chat` and `batch` take them. */
export interface ToolFlags {
  toolset?: string;
  /** Each `--context` given, in order: `key=value`. */
  context?: string[];
  /** Each `--server-tool` given: Claude's own tools to offer (`web_search`, `web_fetch`, `code_execution`). */
  serverTool?: string[];
}

/** The flags as commander gives them. */
export interface TurnFlags extends ToolFlags {
  server?: string[];
  model?: string;
  system?: string;
  maxSteps?: string;
  maxTools?: string;
  toolSearch?: string;
  allow?: string[];
  deny?: string[];
  requireApproval?: string[];
  approvalTimeout?: string;
  /** `--no-format` sets it false. */
  format: boolean;
}

/** The flags that take a list, by their option names. */
const LIST_FLAGS = {
  server: '--server',
  allow: '--allow',
  deny: '--deny',
  requireApproval: '--require-approval',
} as const;

/** The flags given that take a list (a word after one is one more of its values). */
export function listFlagsGiven(flags: TurnFlags): string[] {
  return Object.entries(LIST_FLAGS)
    .filter(([key]) => flags[key as keyof typeof LIST_FLAGS] !== undefined)
    .map(([, flag]) => flag);
}

/** The bounds of `maxToolsPerRequest` in the turn's input. */
const MAX_TOOLS = { min: 1, max: MAX_TOOLS_PER_REQUEST } as const;


const PATTERN = 'server__tool, a bare tool name, or server__*';

/** One more `--context` value after those given before it (commander's collector: the flag repeats). */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Adds `--toolset`, `--context` and `--server-tool` to `command`; for `batch` (`lines`), they are its lines' defaults. */
export function addToolFlags(command: Command, lines = false): Command {
  return command
    .option(
      '--toolset <name>',
      `a tool set of the worker's config (toolsets): its servers and tool rules${lines ? ', for lines that name none' : ''}`,
    )
    .option(
      '--context <key=value>',
      `a value for the turn's tools, never sent to Claude (repeatable; recorded in history: no secrets)${lines ? "; a line's own context keys win" : ''}`,
      collect,
    )
    .option(
      '--server-tool <name>',
      `Claude's own tool to offer, run by the API: ${SERVER_TOOL_KEYS.join(', ')} (repeatable; options in the config or the input)${lines ? ', for lines that set none' : ''}`,
      collect,
    );
}

/** The server tools `--server-tool` flags turn on, each with its defaults; an unknown name is one line naming the flag. */
export function serverToolsOf(names: readonly string[]): ServerToolsInput {
  const tools: ServerToolsInput = {};
  for (const name of names) {
    if (!(SERVER_TOOL_KEYS as readonly string[]).includes(name)) {
      throw new CliError(`--server-tool "${oneLine(name, 100)}": not one of Claude's server tools (${SERVER_TOOL_KEYS.join(', ')})`, EXIT.badInput);
    }
    tools[name as ServerToolKey] = true;
  }
  return tools;
}

/**
 * The context `--context key=value` flags give: each value a string (`key=` an empty one), split at
 * the first `=`; a key given twice takes its last value. A pair without `=`, or a key outside the
 * context's key rule, is one line naming the flag, with exit code 2.
 */
export function contextOf(pairs: readonly string[]): Record<string, string> {
  const context: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    const shown = oneLine(pair, 100);
    if (eq < 0) throw new CliError(`--context "${shown}" has no value: write --context key=value (key= for an empty value)`, EXIT.badInput);
    const key = pair.slice(0, eq);
    const checked = ContextKeySchema.safeParse(key);
    if (!checked.success)
      throw new CliError(`--context "${shown}": ${checked.error.issues[0]!.message}, got "${oneLine(key, 100)}"`, EXIT.badInput);
    context[key] = pair.slice(eq + 1);
  }
  return context;
}

/** The options `--toolset`, `--context` and `--server-tool` set: only those given. */
function toolOptionsOf(flags: ToolFlags): TurnOptions {
  return {
    ...(flags.toolset !== undefined ? { toolset: flags.toolset } : {}),
    ...(flags.context ? { context: contextOf(flags.context) } : {}),
    ...(flags.serverTool ? { serverTools: serverToolsOf(flags.serverTool) } : {}),
  };
}

/**
 * Adds the flags to `command`. `per` says what a budget counts in (`the turn`, or `each message`
 * for a chat).
 */
export function addTurnFlags(command: Command, per: 'the turn' | 'each message'): Command {
  command.option('--server <name...>', 'MCP servers to use (default: all the worker has, or the toolset\'s)');
  return addToolFlags(command)
    .option('--model <model>', 'Claude model')
    .option('--system <prompt>', 'system prompt')
    .option('--max-steps <n>', `Claude calls in the tool loop of ${per}`)
    .option(
      '--max-tools <n>',
      `tools loaded up front per Claude request (${MAX_TOOLS.min}-${MAX_TOOLS.max}; default 15); the rest are found by tool search`,
    )
    .option('--tool-search <mode>', 'tools beyond --max-tools: auto (default) | regex | bm25 (deferred, found by a tool search) | off (dropped)')
    .option('--allow <pattern...>', `offer only these tools (${PATTERN})`)
    .option('--deny <pattern...>', `never offer these tools (${PATTERN})`)
    .option(
      '--require-approval <pattern...>',
      `these tools wait for a person's approval before they run (${PATTERN})`,
    )
    .option(
      '--approval-timeout <seconds>',
      'a call waiting for approval this long is denied (with --require-approval)',
    )
    .option('--no-format', 'skip the response formatter');
}

function parseIntIn(value: string, flag: string, { min, max }: { min: number; max: number }): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new CliError(`${flag} must be an integer from ${min} to ${max}, got "${value}"`, EXIT.badInput);
  return n;
}

function parseSeconds(value: string, flag: string): number {
  const ms = Math.round(Number(value) * 1000);
  if (!Number.isFinite(ms) || ms < 1)
    throw new CliError(`${flag} must be a number of seconds above 0, got "${value}"`, EXIT.badInput);
  return ms;
}

/**
 * The turn options the flags set. Only what a flag sets is present, so a chat resumed without flags
 * leaves the conversation's own options alone. Every turn streams (printed as it is written on a
 * terminal, or with `--events`; a `watch` elsewhere can follow it).
 */
export function turnOptionsOf(flags: TurnFlags): TurnOptions {
  const options: TurnOptions = { stream: true, ...toolOptionsOf(flags) };
  if (flags.server) options.servers = flags.server;
  if (flags.model) options.model = flags.model;
  if (flags.system) options.system = flags.system;
  if (flags.maxSteps) options.maxSteps = parsePositiveInt(flags.maxSteps, '--max-steps');
  if (flags.maxTools) options.maxToolsPerRequest = parseIntIn(flags.maxTools, '--max-tools', MAX_TOOLS);
  if (flags.toolSearch !== undefined) {
    if (!TOOL_SEARCH_MODES.includes(flags.toolSearch as ToolSearchMode))
      throw new CliError(`--tool-search must be one of ${TOOL_SEARCH_MODES.join(', ')}, got "${oneLine(flags.toolSearch, 50)}"`, EXIT.badInput);
    options.toolSearch = flags.toolSearch as ToolSearchMode;
  }
  if (flags.allow || flags.deny)
    options.tools = {
      ...(flags.allow ? { allow: flags.allow } : {}),
      ...(flags.deny ? { deny: flags.deny } : {}),
    };
  if (flags.approvalTimeout && !flags.requireApproval)
    throw new CliError(
      '--approval-timeout goes with --require-approval <pattern...>: the tools whose calls wait',
      EXIT.badInput,
    );
  if (flags.requireApproval) {
    options.approval = { tools: flags.requireApproval };
    if (flags.approvalTimeout)
      options.approval.timeoutMs = parseSeconds(flags.approvalTimeout, '--approval-timeout');
  }
  if (!flags.format) options.format = false;
  return checked(options);
}

/**
 * The defaults `batch`'s flags give its lines (`--model`, `--toolset`, `--context`, `--server-tool`): only those
 * given. How a line takes them is `parseBatchLines`' rule (src/schemas/batch-lines.ts).
 */
export function batchDefaultsOf(flags: ToolFlags & { model?: string }): TurnOptions {
  return checked({ ...(flags.model ? { model: flags.model } : {}), ...toolOptionsOf(flags) });
}

/** `options` once the turn input's schema passed them; else one line naming every bad field, exit code 2. */
function checked(options: TurnOptions): TurnOptions {
  try {
    parseTurnOptions(options);
  } catch (err) {
    if (err instanceof ChatTurnInputError) throw new CliError(`invalid turn options: ${err.problems.join('; ')}`, EXIT.badInput);
    throw err;
  }
  return options;
}

/** The turn's input: `question` with the options the flags set; a blank question is one line, exit code 2. */
export function turnInputOf(question: string, options: TurnOptions): ChatTurnInput {
  if (!question.trim()) throw new CliError('the question is empty: nothing was started', EXIT.badInput);
  return { ...options, question };
}
