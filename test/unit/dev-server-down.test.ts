/**
 * The records of dev servers that died, and the rule for starting a server where one is recorded:
 * on the same database it may be started again; on another, the command names the recorded server
 * and the exact command that starts it. Real record files in a temporary state directory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { assertMayStartDevServer, restartCommand } from '../../src/cli/connect';
import {
  lastDevServerRecord,
  readDevServerRecord,
  writeDevServerRecord,
} from '../../src/temporal/dev-server-record';

const home = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-down-unit-'));

/** The id of a process that has ended. */
const deadPid = (): number => spawnSync(process.execPath, ['-e', '0']).pid!;

it('keeps the record of a server that died; starts again only on its own database, else names it', () => {
  const db = path.join(home, 'my data.db');
  writeDevServerRecord({
    pid: deadPid(),
    address: '127.0.0.1:17444',
    uiUrl: 'http://127.0.0.1:19000',
    dbFile: db,
    startedAt: '',
  }, home);
  expect(readDevServerRecord('127.0.0.1:17444', home)).toBeUndefined(); // not running…
  const record = lastDevServerRecord('localhost:17444', home)!; // …but remembered, at any loopback spelling
  expect(record.dbFile).toBe(db);
  expect(restartCommand(record)).toBe(`mcp-turns server --port 17444 --ui-port 19000 --db '${db}'`);
  expect(() => assertMayStartDevServer('127.0.0.1:17444', path.join(home, 'temporal.db'), home)).toThrow(
    `the Temporal dev server on 127.0.0.1:17444 (database ${db}, pid ${record.pid}) is not running: ` +
      `start it with \`mcp-turns server --port 17444 --ui-port 19000 --db '${db}'\``,
  );
  expect(assertMayStartDevServer('127.0.0.1:17444', db, home)).toEqual(record);
  expect(assertMayStartDevServer('127.0.0.1:17555', db, home)).toBeUndefined();
  // Linux: a live process by the recorded id that is not a dev server (this one) is not the server.
  writeDevServerRecord({ ...record, pid: process.pid }, home);
  if (process.platform === 'linux') expect(readDevServerRecord('127.0.0.1:17444', home)).toBeUndefined();
});
