/**
 * The settings of this process's own environment, for a library entry a program calls without
 * settings of its own (`connectClient()`, `new McpTurnsPlugin()`). With the CLI's
 * (src/cli/cli-settings.ts), the only place process.env is read for settings.
 */
import { loadSettings, type Settings, type SettingsSources } from './settings';

export function processSettings(sources: Omit<SettingsSources, 'env'> = {}): Settings {
  return loadSettings({ ...sources, env: process.env });
}
