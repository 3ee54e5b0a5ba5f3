/**
 * The claim a dev server start takes on its database: exclusive while its process runs, taken over
 * once that process has ended, given up on release. Real claim files in a temporary directory.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { claimDatabase, databaseHolder, DatabaseHeldError } from '../../src/temporal/database-holder';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-db-claim-'));

it('lets one start at a time claim a database, names the holder to the next, and frees it on release', () => {
  const db = path.join(dir, 'one.db');
  const claim = claimDatabase(db, '127.0.0.1:7301');
  expect(databaseHolder(db)).toEqual({ pid: process.pid, address: '127.0.0.1:7301', starting: true });
  expect(() => claimDatabase(db, '127.0.0.1:7302')).toThrow(new DatabaseHeldError(db, { pid: process.pid, address: '127.0.0.1:7301', starting: true }));
  expect(() => claimDatabase(db, '127.0.0.1:7302')).toThrow(
    `database ${db} is held by a Temporal dev server being started on 127.0.0.1:7301 (by pid ${process.pid})`,
  );
  claim.release();
  expect(databaseHolder(db)).toBeUndefined();
  claimDatabase(db, '127.0.0.1:7302').release();
});

it('takes over the claim of a process that has ended, and of a server id given to another program', () => {
  const db = path.join(dir, 'two.db');
  const deadPid = spawnSync(process.execPath, ['-e', '0']).pid!;
  fs.writeFileSync(`${db}.server.json`, JSON.stringify({ pid: deadPid, address: '127.0.0.1:7303' }));
  expect(databaseHolder(db)).toBeUndefined();
  const claim = claimDatabase(db, '127.0.0.1:7304');
  expect(databaseHolder(db)?.address).toBe('127.0.0.1:7304');
  claim.release();
  if (process.platform === 'linux') {
    // This process runs but is not a dev server: a server's claim naming it is stale.
    fs.writeFileSync(`${db}.server.json`, JSON.stringify({ pid: process.pid, address: '127.0.0.1:7303' }));
    expect(databaseHolder(db)).toBeUndefined();
  }
});
