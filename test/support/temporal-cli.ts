/**
 * The Temporal CLI tests and benchmarks start servers with: the project's own resolution, with the
 * settings of this process's environment (TEMPORAL_CLI_PATH, the state directory's cache).
 */
import { loadSettings } from '../../src/config/settings';
import { resolveTemporalCli, type ResolvedTemporalCli } from '../../src/temporal/temporal-cli';

export function testTemporalCli(log?: (line: string) => void): ResolvedTemporalCli {
  const settings = loadSettings({ env: process.env });
  return resolveTemporalCli({
    stateDir: settings.stateDir,
    ...(settings.temporalCliPath ? { cliPath: settings.temporalCliPath } : {}),
    ...(log ? { log } : {}),
  });
}
