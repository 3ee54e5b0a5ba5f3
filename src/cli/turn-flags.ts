/**
 * The flags that shape a turn, shared by `run` and `chat`, and the one mapping from them to the
 * turn's input: `--server`, `--model`, `--system`, `--max-steps`, `--max-tools`, `--allow`,
 * `--deny`, `--require-approval`, `--approval-timeout` and `--no-format`. A bad flag is one line
 * naming it, with exit code 2, before anything is started.
 */
import type { Command } from 'commander';
import type { TurnOptions } from '../core/conversation';
import { MAX_TOOLS_PER_REQUEST } from '../core/input-limits';
import { ChatTurnInputError, type ChatTurnInput } from '../schemas/turn-input';
import { parseTurnOptions } from '../schemas/turn-options';
import { CliError, parsePositiveInt } from './cli-error';
import { EXIT } from './exit-codes';

/** The flags as commander gives them. */
export interface TurnFlags {
  server?: string[];
  model?: string;
  system?: string;
  maxSteps?: string;
  maxTools?: string;
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

/**
 * Adds the flags to `command`. `per` says what a budget counts in (`the turn`, or `each message`
 * for a chat).
 */
export function addTurnFlags(command: Command, per: 'the turn' | 'each message'): Command {
  return command
    .option('--server <name...>', 'MCP servers to use (default: all the worker has)')
    .option('--model <model>', 'Claude model')
    .option('--system <prompt>', 'system prompt')
    .option('--max-steps <n>', `Claude calls in the tool loop of ${per}`)
    .option(
      '--max-tools <n>',
      `tools offered to Claude per request (${MAX_TOOLS.min}-${MAX_TOOLS.max}; default 15)`,
    )
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
  const options: TurnOptions = { stream: true };
  if (flags.server) options.servers = flags.server;
  if (flags.model) options.model = flags.model;
  if (flags.system) options.system = flags.system;
  if (flags.maxSteps) options.maxSteps = parsePositiveInt(flags.maxSteps, '--max-steps');
  if (flags.maxTools) options.maxToolsPerRequest = parseIntIn(flags.maxTools, '--max-tools', MAX_TOOLS);
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
