/**
 * A dev server database made by an earlier version lacks the search attributes added since, and
 * `temporal server start-dev --search-attribute` registers attributes only in a new database: the
 * dev server mcp-turns starts on such a database has the missing ones added as it starts, and says so.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES, searchAttributeCliArgs } from '../../src/core/search-attributes';
import { freePort, startDevServer } from '../../src/temporal/dev-server';
import { testTemporalCli } from '../support/temporal-cli';

jest.setTimeout(120_000);

async function customAttributes(address: string): Promise<string[]> {
  const connection = await Connection.connect({ address });
  try {
    return Object.keys((await connection.operatorService.listSearchAttributes({ namespace: 'default' })).customAttributes ?? {}).filter((n) => n.startsWith('McpTurns'));
  } finally {
    await connection.close();
  }
}

it("registers the attributes an earlier version's database lacks when it starts the dev server on it", async () => {
  const dbFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-upgrade-')), 'temporal.db');
  const cliPath = testTemporalCli().path;
  // An earlier version's database: made without mcp-turns' newest attribute.
  const older = await startDevServer({ port: await freePort(), dbFile, cliPath, searchAttributes: false, extraArgs: searchAttributeCliArgs().slice(0, -2) });
  const before = await customAttributes(older.address);
  await older.stop();
  expect(before).not.toContain(SEARCH_ATTRIBUTES.at(-1)!.name);

  const lines: string[] = [];
  const server = await startDevServer({ port: await freePort(), dbFile, cliPath, onLog: (l) => lines.push(l) });
  try {
    expect((await customAttributes(server.address)).sort()).toEqual(SEARCH_ATTRIBUTES.map((k) => k.name).sort());
    expect(lines).toContain(`registered search attributes ${SEARCH_ATTRIBUTES.at(-1)!.name} (the database predates them)`);
  } finally {
    await server.stop();
  }
});
