/**
 * Every recorded history of a real turn in histories/ must replay against the current workflow code,
 * and an incompatible change must be caught. When a change alters history, the histories are
 * re-recorded: test/README.md, "Changing workflow code that alters history". Histories are replayed with
 * the converter of a process that encrypts under the test keyring (test-keyring.json, a key for tests
 * only): `encrypted-two-round` was recorded under its key k1, the others in plaintext, which it reads too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Worker, DefaultLogger, Runtime } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { workflowsPath } from '../../src/worker/workflows-path';
import { createDataConverter } from '../../src/data-converter/data-converter';
import { testSettings } from '../support/settings';
import { isEncrypted } from '../../src/encryption/encryption-codec';

const dataConverter = createDataConverter(testSettings({ MCP_TURNS_STORAGE: 'none' }).storage.get(), {
  keyringFile: path.join(__dirname, 'test-keyring.json'),
  compress: false,
});

jest.setTimeout(120_000);

const dir = path.join(__dirname, 'histories');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

function load(file: string): { workflowId: string; history: ReturnType<typeof historyFromJSON> } {
  return { workflowId: path.basename(file, '.json'), history: historyFromJSON(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))) };
}

beforeAll(() => {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // installed already
  }
});

describe('replay of recorded chat turns', () => {
  it('has recorded histories to replay', () => {
    expect(files.length).toBeGreaterThanOrEqual(1);
  });

  it('replays every recorded history against the current workflow code', async () => {
    const results = [];
    for await (const r of Worker.runReplayHistories({ workflowsPath: workflowsPath(), dataConverter }, files.map(load))) results.push(r);
    expect(results.map((r) => ({ id: r.workflowId, error: r.error?.message }))).toEqual(files.map((f) => ({ id: path.basename(f, '.json'), error: undefined })));
  });

  it('has a history recorded under key k1 whose inputs and results are ciphertext', () => {
    const { history } = load('encrypted-two-round.json');
    const started = history.events![0]!.workflowExecutionStartedEventAttributes!;
    const completed = history.events!.at(-1)!.workflowExecutionCompletedEventAttributes!;
    for (const payload of [started.input!.payloads![0]!, completed.result!.payloads![0]!, history.events![0]!.userMetadata!.summary!]) {
      expect(isEncrypted(payload)).toBe(true);
      expect(Buffer.from(payload.metadata!['encryption-key-id']!).toString()).toBe('k1');
    }
  });

  it('fails replay when the workflow changes incompatibly', async () => {
    const [first] = files;
    const { history } = load(first!);
    await expect(
      Worker.runReplayHistory({ workflowsPath: require.resolve('./incompatible-workflows') }, history),
    ).rejects.toBeInstanceOf(DeterminismViolationError);
  });
});
