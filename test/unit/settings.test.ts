/**
 * The settings (src/config/settings.ts): the config file and the environment read once into one
 * value; each section checked on its first use, once, its error thrown there, so a command fails
 * on what it needs and only on that.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSettings } from '../../src/config/settings';
import { isSettingsError } from '../../src/config/settings-errors';
import { WorkerConfigError } from '../../src/config/worker-config';
import { StorageConfigError } from '../../src/storage/storage-config';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'settings-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function errorOf(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

function configFile(text: string, name = 'c.yaml'): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

it('reads the config file once, whatever the number of sections used', () => {
  const file = configFile('mcp_servers:\n  files: { command: node }\nencryption: { keyring: ring.json }\nserve: { port: 9001 }\n');
  const read = jest.spyOn(fs, 'readFileSync');
  try {
    const settings = loadSettings({ env: {}, configFile: file, stateDir: dir });
    expect(settings.worker.get().servers.map((s) => s.name)).toEqual(['files']);
    expect(settings.encryption.get()).toEqual({ keyringFile: path.join(dir, 'ring.json'), compress: false });
    expect(settings.serve.get().port).toBe(9001);
    expect(read.mock.calls.filter(([f]) => f === file)).toHaveLength(1);
  } finally {
    read.mockRestore();
  }
});

it('fails a command only on the sections it uses: a client does not need the MCP servers\' secrets', () => {
  const file = configFile('mcp_servers:\n  gh: { type: http, url: "https://x.example/mcp", headers: { Authorization: "Bearer ${GH_TOKEN}" } }\nencryption: { keyring: ring.json }\n');
  const settings = loadSettings({ env: {}, configFile: file, stateDir: dir });
  // The client's sections.
  expect(settings.encryption.get()?.keyringFile).toBe(path.join(dir, 'ring.json'));
  expect(settings.storage.get().location).toEqual({ kind: 'fs', dir: path.join(dir, 'payloads') });
  // The worker's: the unset variable, named at its path.
  expect(() => settings.worker.get()).toThrow(WorkerConfigError);
  try {
    settings.worker.get();
  } catch (err) {
    expect(isSettingsError(err)).toBe(true);
    expect((err as WorkerConfigError).problems).toEqual(['mcp_servers.gh.headers.Authorization: environment variable GH_TOKEN is not set']);
  }
});

it('keeps each section\'s own error, and every one is a settings error (bad input)', () => {
  const settings = loadSettings({ env: { MCP_TURNS_STORAGE: 'ftp://x', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }, stateDir: dir });
  expect(() => settings.storage.get()).toThrow(StorageConfigError);
  for (const read of [() => settings.storage.get(), () => settings.tracing.get(), () => settings.claudeApi.get()]) {
    expect(isSettingsError(errorOf(read))).toBe(true);
  }
  expect(() => settings.tracing.get()).toThrow(/OTLP\/HTTP port/);
  expect(() => settings.claudeApi.get()).toThrow(/no Claude API key/);
  // Sections without a problem are there all the same.
  expect(settings.encryption.get()).toBeUndefined();
  expect(settings.worker.get().servers).toEqual([]);
});

it('takes flags over the environment, and the environment over the defaults', () => {
  const env = { MCP_TURNS_TASK_QUEUE: 'env-q', MCP_TURNS_METRICS: '127.0.0.1:9000', MCP_TURNS_HOME: path.join(dir, 'home'), MCP_TURNS_UI_URL: 'http://ui:8233/' };
  const fromEnv = loadSettings({ env });
  expect([fromEnv.taskQueue, fromEnv.metricsAddress, fromEnv.stateDir, fromEnv.uiUrl]).toEqual(['env-q', '127.0.0.1:9000', path.join(dir, 'home'), 'http://ui:8233/']);
  const flagged = loadSettings({ env, stateDir: path.join(dir, 'flag'), flags: { taskQueue: 'flag-q', metricsAddress: '127.0.0.1:9001', serve: { port: 9100 } } });
  expect([flagged.taskQueue, flagged.metricsAddress, flagged.stateDir, flagged.serve.get().port]).toEqual(['flag-q', '127.0.0.1:9001', path.join(dir, 'flag'), 9100]);
  expect(loadSettings({ env: {} }).taskQueue).toBe('mcp-turns');
  expect(loadSettings({ env: { NO_COLOR: '1' } }).color).toBe(false);
});

it('MCP_TURNS_KEYRING wins over the file, which is then not needed at all', () => {
  const settings = loadSettings({ env: { MCP_TURNS_KEYRING: path.join(dir, 'k.json'), MCP_TURNS_CONFIG: path.join(dir, 'missing.yaml') }, stateDir: dir });
  expect(settings.encryption.get()).toEqual({ keyringFile: path.join(dir, 'k.json'), compress: false });
  expect(errorOf(() => settings.worker.get())).toMatchObject({ problems: [expect.stringMatching(/cannot read: ENOENT/)] });
});

it('takes config text in place of a file (the demo\'s own MCP server)', () => {
  const settings = loadSettings({ env: {}, stateDir: dir, configDocument: { text: '{"mcpServers":{"everything":{"command":"node"}}}', format: 'json', source: 'demo' } });
  expect(settings.worker.get()).toMatchObject({ source: 'demo', servers: [{ name: 'everything' }] });
  expect(settings.configFile).toBeUndefined();
});
