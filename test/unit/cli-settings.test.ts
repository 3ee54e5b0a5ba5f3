/**
 * A command's `--state-dir` and `--config` are resolved once (src/cli/cli-settings.ts) and passed
 * down as values: running a command leaves process.env as it was, and the values still reach what
 * reads them (here: `keys new` finds the keyring named by the config's `encryption.keyring`).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { cliSettings } from '../../src/cli/cli-settings';
import { buildProgram } from '../../src/cli/main';
import { stateDir } from '../../src/temporal/project-paths';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-settings-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The settings `cliSettings` gives the action of `sub` for these words after the program name. */
function settingsFor(words: string[], env: NodeJS.ProcessEnv): Pick<ReturnType<typeof cliSettings>, 'stateDir' | 'configFile'> {
  let seen: ReturnType<typeof cliSettings> | undefined;
  const program = new Command('p').option('--state-dir <dir>');
  program.command('sub').option('--config <file>').action((_opts: unknown, command: Command) => {
    seen = cliSettings(command, {}, env);
  });
  program.parse(['node', 'p', ...words]);
  const { stateDir: state, configFile } = seen!;
  return { stateDir: state, ...(configFile !== undefined ? { configFile } : {}) };
}

describe('cliSettings', () => {
  it('--state-dir and --config win, resolved to absolute paths', () => {
    const env = { MCP_TURNS_HOME: '/env/home', MCP_TURNS_CONFIG: '/env/config.yaml' };
    expect(settingsFor(['--state-dir', 'rel/state', 'sub', '--config', 'rel/c.yaml'], env)).toEqual({
      stateDir: path.resolve('rel/state'),
      configFile: path.resolve('rel/c.yaml'),
    });
  });

  it('without the flags, MCP_TURNS_HOME (else the default) and MCP_TURNS_CONFIG, resolved to absolute paths', () => {
    expect(settingsFor(['sub'], { MCP_TURNS_HOME: '/env/home', MCP_TURNS_CONFIG: 'c.yaml' })).toEqual({ stateDir: '/env/home', configFile: path.resolve('c.yaml') });
    expect(settingsFor(['sub'], {})).toEqual({ stateDir: stateDir({}) });
  });
});

describe('a command run', () => {
  it('leaves process.env unchanged for --state-dir and --config, and the config still names the keyring', async () => {
    const config = path.join(dir, 'c.yaml');
    fs.writeFileSync(config, 'encryption:\n  keyring: ring.json\n');
    const before = { ...process.env };
    const log = jest.spyOn(console, 'log').mockImplementation(() => undefined);
    try {
      const argv = ['node', 'mcp-turns', '--state-dir', path.join(dir, 'state'), 'keys', 'new', '--config', config];
      await buildProgram(argv).parseAsync(argv);
    } finally {
      log.mockRestore();
    }
    expect(process.env).toEqual(before);
    expect(fs.existsSync(path.join(dir, 'ring.json'))).toBe(true);
  });
});
