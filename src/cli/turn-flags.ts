/**
 * The flags that shape a turn, shared by `run` and `chat`, and the one mapping from them to the
 * turn's input: `--server`, `--toolset`, `--context`, `--server-tool`, `--model`, `--system`, `--max-steps`,
 * `--max-tools`, `--tool-search`, `--allow`, `--deny`, `--require-approval`, `--approval-timeout`,
 * `--no-format`, and the request controls `--output-schema`, `--effort`, `--stop-sequence`,
 * `--tool-choice`, `--tool-choice-every`, `--cache-ttl` and `--user-id` (`--temperature`, `--top-p`
 * and `--top-k` exist only to be refused). `batch` shares `--toolset`, `--context`, `--server-tool`
 * and the request controls (its lines' defaults). A bad flag is one line naming it, with exit code
 * 2, before anything is started; the turn input's schema checks what the flags set, and its
 * complaints about a request control name the flag that set it.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import type { TurnOptions } from '../core/conversation';
import { MAX_TOOLS_PER_REQUEST } from '../core/input-limits';
import type { OutputSpec } from '../core/output-spec';
import { CACHE_TTLS, EFFORTS, loopToolChoiceOf, MAX_STOP_SEQUENCES, type CacheTtl, type Effort } from '../core/request-controls';
import { oneLine } from '../core/text';
import { SERVER_TOOL_KEYS, type ServerToolKey, type ServerToolsInput, type ToolSearchMode } from '../core/server-tools';

const TOOL_SEARCH_MODES: readonly ToolSearchMode[] = ['auto', 'regex', 'bm25', 'off'];
import { issueProblems } from '../schemas/issue-problems';
import { ContextKeySchema, turnInputProblems, type ChatTurnInput } from '../schemas/turn-input';
import { TurnOptionsSchema } from '../schemas/turn-options';
import { CliError, parsePositiveInt } from './cli-error';
import { EXIT } from './exit-codes';
import { isRecord } from '../core/is-record';

/** `--toolset`, `--context` and `--server-tool` as commander gives them: `run`, `chat` and `batch` take them. */
export interface ToolFlags {
  toolset?: string;
  /** Each `--context` given, in order: `key=value`. */
  context?: string[];
  /** Each `--server-tool` given: Claude's own tools to offer (`web_search`, `web_fetch`, `code_execution`). */
  serverTool?: string[];
}

/**
 * The request controls' flags as commander gives them: `run`, `chat` and `batch` take them (for
 * `batch`, its lines' defaults).
 */
export interface RequestFlags {
  /** A JSON file: the answer's JSON Schema, or `{ "schema", "name"?, "description"? }`. */
  outputSchema?: string;
  effort?: string;
  /** Each `--stop-sequence` given, in order. */
  stopSequence?: string[];
  toolChoice?: string;
  /** `--tool-choice-every`: the choice holds for every call of the loop, not only its first. */
  toolChoiceEvery?: boolean;
  cacheTtl?: string;
  userId?: string;
  /** Refused: the Messages API no longer takes them. */
  temperature?: string;
  topP?: string;
  topK?: string;
}

/** The flags as commander gives them. */
export interface TurnFlags extends ToolFlags, RequestFlags {
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
 * Adds the request controls' flags to `command`: `--output-schema`, `--effort`, `--stop-sequence`,
 * `--tool-choice`, `--tool-choice-every`, `--cache-ttl`, `--user-id`, and `--temperature`, `--top-p`
 * and `--top-k`, which are refused. For `batch` (`lines`), they are its lines' defaults.
 */
export function addRequestFlags(command: Command, lines = false): Command {
  const unless = (field: string): string => (lines ? `; a line's own ${field} wins` : '');
  return command
    .option(
      '--output-schema <file>',
      'the answer is one JSON object that matches a JSON Schema: a JSON file holding the schema ("type": "object"), ' +
        `or {"schema", "name"?, "description"?}; printed as JSON${unless('output')}`,
    )
    .option('--effort <level>', `how much the model puts into its answers: ${EFFORTS.join(' | ')}${unless('effort')}`)
    .option(
      '--stop-sequence <text>',
      `text that ends a loop call where Claude writes it; the turn stops with stop_sequence (repeatable, at most ${MAX_STOP_SEQUENCES})${unless('stopSequences')}`,
      collect,
    )
    .option(
      '--tool-choice <choice>',
      `the tool loop's first call: auto | any (some tool) | none | server__tool (that tool)${unless('toolChoice')}`,
    )
    .option('--tool-choice-every', 'with --tool-choice: the choice holds for every call of the loop, not only the first')
    .option('--cache-ttl <ttl>', `the prompt cache's lifetime: ${CACHE_TTLS.join(' | ')}${unless('cache')}`)
    .option('--user-id <id>', `the end user's opaque id (a uuid or a hash, never an e-mail), sent as metadata.user_id${unless('userId')}`)
    .option('--temperature <value>', 'refused: the Messages API no longer takes it (use --effort)')
    .option('--top-p <value>', 'refused: the Messages API no longer takes it (use --effort)')
    .option('--top-k <value>', 'refused: the Messages API no longer takes it (use --effort)');
}

/**
 * The turn's `output` from the `--output-schema` file: `{ schema }` for a file holding a JSON
 * Schema, the file's object as it is when it holds `{ "schema": {...}, "name"?, "description"? }`
 * (an object `schema` and no `type` at its top). An unreadable file or one that is not JSON is one
 * line naming the flag and the file, exit code 2; the schema itself is the turn input's to check.
 */
export function outputSpecOf(file: string): OutputSpec {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`--output-schema ${file}: cannot read it: ${(err as Error).message}`, EXIT.badInput);
  }
  let json: unknown;
  try {
    json = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (err) {
    throw new CliError(`--output-schema ${file}: not JSON: ${oneLine((err as Error).message, 200)}`, EXIT.badInput);
  }
  if (!isRecord(json)) {
    const kind = Array.isArray(json) ? 'an array' : json === null ? 'null' : `a ${typeof json}`;
    throw new CliError(`--output-schema ${file}: holds ${kind}: a JSON Schema is a JSON object (with "type": "object")`, EXIT.badInput);
  }
  // The schema, its name and description are the turn input's to check.
  return isRecord(json.schema) && !('type' in json) ? (json as unknown as OutputSpec) : { schema: json };
}

/**
 * What each request control's flag sets in the turn's input, by field, with how a problem with it
 * names the flag: `--effort "extreme"`, `--output-schema schema.json`.
 */
type FlagLabels = Partial<Record<string, string>>;

/** The request controls the flags set (only those given), and the flag each field came from. */
function requestOptionsOf(flags: RequestFlags): { options: TurnOptions; labels: FlagLabels } {
  const options: TurnOptions = {};
  const labels: FlagLabels = {};
  const shown = (value: string): string => `"${oneLine(value, 100)}"`;
  if (flags.outputSchema !== undefined) {
    options.output = outputSpecOf(flags.outputSchema);
    labels.output = `--output-schema ${flags.outputSchema}`;
  }
  if (flags.effort !== undefined) {
    options.effort = flags.effort as Effort;
    labels.effort = `--effort ${shown(flags.effort)}`;
  }
  if (flags.stopSequence) {
    options.stopSequences = flags.stopSequence;
    labels.stopSequences = '--stop-sequence';
  }
  if (flags.toolChoiceEvery && flags.toolChoice === undefined)
    throw new CliError('--tool-choice-every goes with --tool-choice <auto|any|none|server__tool>: the choice that holds for every call', EXIT.badInput);
  if (flags.toolChoice !== undefined) {
    options.toolChoice = flags.toolChoiceEvery ? { ...loopToolChoiceOf(flags.toolChoice), on: 'every' } : flags.toolChoice;
    labels.toolChoice = `--tool-choice ${shown(flags.toolChoice)}`;
  }
  if (flags.cacheTtl !== undefined) {
    options.cache = { ttl: flags.cacheTtl as CacheTtl };
    labels.cache = `--cache-ttl ${shown(flags.cacheTtl)}`;
  }
  if (flags.userId !== undefined) {
    options.userId = flags.userId;
    labels.userId = `--user-id ${shown(flags.userId)}`;
  }
  // Set as given, for the schema to refuse by name.
  if (flags.temperature !== undefined) {
    options.temperature = flags.temperature;
    labels.temperature = '--temperature';
  }
  if (flags.topP !== undefined) {
    options.top_p = flags.topP;
    labels.top_p = '--top-p';
  }
  if (flags.topK !== undefined) {
    options.top_k = flags.topK;
    labels.top_k = '--top-k';
  }
  return { options, labels };
}

/**
 * Adds the flags to `command`. `per` says what a budget counts in (`the turn`, or `each message`
 * for a chat).
 */
export function addTurnFlags(command: Command, per: 'the turn' | 'each message'): Command {
  command.option('--server <name...>', 'MCP servers to use (default: all the worker has, or the toolset\'s)');
  addToolFlags(command)
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
  return addRequestFlags(command);
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
  const request = requestOptionsOf(flags);
  const options: TurnOptions = { stream: true, ...toolOptionsOf(flags), ...request.options };
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
  return checked(options, request.labels);
}

/**
 * The defaults `batch`'s flags give its lines (`--model`, `--toolset`, `--context`, `--server-tool`
 * and the request controls): only those given. How a line takes them is `parseBatchLines`' rule
 * (src/schemas/batch-lines.ts).
 */
export function batchDefaultsOf(flags: ToolFlags & RequestFlags & { model?: string }): TurnOptions {
  const request = requestOptionsOf(flags);
  return checked({ ...(flags.model ? { model: flags.model } : {}), ...toolOptionsOf(flags), ...request.options }, request.labels);
}

/**
 * `options` once the turn input's schema passed them; else one line, exit code 2. A problem with a
 * field a request control's flag set names the flag (`--effort "extreme": …`, `--output-schema
 * s.json: …`; flags with the same problem share it: `--temperature, --top-p: …`); the others are
 * named by field after `invalid turn options:`.
 */
function checked(options: TurnOptions, labels: FlagLabels = {}): TurnOptions {
  const parsed = TurnOptionsSchema.safeParse(options);
  if (parsed.success) return options;
  const byFlag = new Map<string, string[]>(); // message → the flags that have it
  const byField: string[] = [];
  const fieldProblems = turnInputProblems(parsed.error);
  parsed.error.issues.forEach((issue, i) => {
    const field = issue.path[0];
    const label = typeof field === 'string' ? labels[field] : undefined;
    if (label === undefined) {
      byField.push(fieldProblems[i]!);
      return;
    }
    for (const { at, message } of issueProblems([issue])) {
      const within = at.split('.').slice(1);
      const flag = flagOf(label, field as string, within, options);
      // A problem of the output's schema is the file's (in its first form the file is the schema); any other names its key.
      const where = field === 'output' ? within.slice(within[0] === 'schema' ? 1 : 0).join('.') : '';
      const line = where ? `${where}: ${message}` : message;
      byFlag.set(line, [...(byFlag.get(line) ?? []), flag]);
    }
  });
  const lines = [...byFlag].map(([message, flags]) => `${[...new Set(flags)].join(', ')}: ${message}`);
  if (byField.length) lines.push(`invalid turn options: ${byField.join('; ')}`);
  throw new CliError(lines.join('; '), EXIT.badInput);
}

/**
 * The flag a problem at `within` (below `field`) is named by: `label`, or for one of several
 * `--stop-sequence` values, that flag with its value.
 */
function flagOf(label: string, field: string, within: string[], options: TurnOptions): string {
  if (field !== 'stopSequences' || within.length === 0) return label;
  const value = options.stopSequences?.[Number(within[0])];
  // As JSON: a stop sequence's whitespace is what it is made of.
  return value === undefined ? label : `${label} ${JSON.stringify(value.length > 100 ? `${value.slice(0, 99)}…` : value)}`;
}

/** The turn's input: `question` with the options the flags set; a blank question is one line, exit code 2. */
export function turnInputOf(question: string, options: TurnOptions): ChatTurnInput {
  if (!question.trim()) throw new CliError('the question is empty: nothing was started', EXIT.badInput);
  return { ...options, question };
}
