/**
 * The settings a command runs with (src/config/settings.ts), loaded once in its action from its
 * flags, the environment and the config file, and passed down as a value. The rule: nothing in src/
 * writes process.env (eslint.config.mjs enforces it), so a flag reaches what it sets as a value,
 * never as an environment variable.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { loadSettings, type Settings, type SettingsSources } from '../config/settings';

/**
 * The settings of `command` (the one whose action runs): the program's `--state-dir`, the command's
 * `--config`, `--task-queue` and `--metrics` where it has them, and `flags` (e.g. `serve`'s host and port).
 */
export function cliSettings(command: Command, flags: NonNullable<SettingsSources['flags']> = {}, env: NodeJS.ProcessEnv = process.env): Settings {
  const opts = command.optsWithGlobals<{ stateDir?: string; config?: unknown; taskQueue?: unknown; metrics?: unknown }>();
  return loadSettings({
    env,
    ...(opts.stateDir ? { stateDir: path.resolve(opts.stateDir) } : {}),
    ...(typeof opts.config === 'string' ? { configFile: path.resolve(opts.config) } : {}),
    flags: {
      ...(typeof opts.taskQueue === 'string' ? { taskQueue: opts.taskQueue } : {}),
      ...(typeof opts.metrics === 'string' ? { metricsAddress: opts.metrics } : {}),
      ...flags,
    },
  });
}
