/**
 * Settings for tests and benchmarks: the project's own loader (src/config/settings.ts) on this
 * process's environment (the global setup's MCP_TURNS_STORAGE and dev server), or on `env`.
 */
import { loadSettings, type Settings, type SettingsSources } from '../../src/config/settings';
import { dataConverterOf } from '../../src/data-converter/data-converter';
import type { DataConverter } from '@temporalio/common';

export function testSettings(env: NodeJS.ProcessEnv = process.env, sources: Omit<SettingsSources, 'env'> = {}): Settings {
  return loadSettings({ ...sources, env });
}

/** The data converter of {@link testSettings}: the one the workers and clients of a test share. */
export function testDataConverter(env: NodeJS.ProcessEnv = process.env): DataConverter {
  return dataConverterOf(testSettings(env));
}

/** The state directory of this process's environment (MCP_TURNS_HOME, else the project's). */
export function testStateDir(): string {
  return testSettings().stateDir;
}
