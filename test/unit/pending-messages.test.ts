/** The files in which `mcp-turns chat` keeps a sent message until its outcome is printed. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PendingMessages } from '../../src/cli/pending-messages';

const root = () => fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-pending-'));

it('keeps each message until it is removed, lists them oldest first, and leaves no folder behind', async () => {
  const dir = root();
  const pending = new PendingMessages('conv-1', dir);
  expect(pending.list()).toEqual([]);
  pending.add({ messageId: 'm-1', text: 'first' });
  await new Promise((r) => setTimeout(r, 5));
  pending.add({ messageId: 'm-2', text: 'second' });
  // Another process (a chat resumed after a crash) sees them.
  expect(new PendingMessages('conv-1', dir).list().map((m) => [m.messageId, m.text, m.conversationId])).toEqual([
    ['m-1', 'first', 'conv-1'],
    ['m-2', 'second', 'conv-1'],
  ]);
  expect(new PendingMessages('conv-2', dir).list()).toEqual([]);
  pending.remove('m-1');
  expect(pending.list().map((m) => m.messageId)).toEqual(['m-2']);
  pending.remove('m-2');
  expect(fs.readdirSync(dir)).toEqual([]);
});

it('keeps ids that are not file names inside its folder, and skips files that are not its own', () => {
  const dir = root();
  const pending = new PendingMessages('../../etc/conv', dir);
  pending.add({ messageId: '../m/..', text: 'odd ids' });
  expect(fs.readdirSync(dir)).toHaveLength(1);
  expect(path.dirname(pending.dir)).toBe(dir);
  fs.writeFileSync(path.join(pending.dir, 'broken.json'), '{not json');
  expect(pending.list().map((m) => m.messageId)).toEqual(['../m/..']);
});
