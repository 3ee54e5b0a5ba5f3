/**
 * The settings a command runs with, resolved once from its flags and the environment and passed
 * down as values. The rule: nothing in src/ writes process.env (eslint.config.mjs enforces it), so
 * a flag reaches what it sets as a parameter, never as an environment variable.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { stateDir } from '../temporal/project-paths';

export interface CliSettings {
  /** Where machine-local state is kept: `--state-dir`, else MCP_TURNS_HOME, else the default (absolute). */
  stateDir: string;
  /**
   * The config file whose settings every part must agree on (its `encryption:` section): the
   * command's `--config` (absolute), else MCP_TURNS_CONFIG; undefined for none.
   */
  configFile?: string;
}

/** The settings without flags: MCP_TURNS_HOME (else the default) and MCP_TURNS_CONFIG of `env`. */
export function envSettings(env: NodeJS.ProcessEnv = process.env): CliSettings {
  return { stateDir: stateDir(env), ...(env.MCP_TURNS_CONFIG !== undefined ? { configFile: env.MCP_TURNS_CONFIG } : {}) };
}

/** The settings of `command` (the one whose action runs; `--state-dir` is the program's option). */
export function cliSettings(command: Command, env: NodeJS.ProcessEnv = process.env): CliSettings {
  const { stateDir: dir, config } = command.optsWithGlobals<{ stateDir?: string; config?: unknown }>();
  return {
    ...envSettings(env),
    ...(dir ? { stateDir: path.resolve(dir) } : {}),
    ...(typeof config === 'string' ? { configFile: path.resolve(config) } : {}),
  };
}
