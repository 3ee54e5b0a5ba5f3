/**
 * docker-compose's search attribute job against the real cluster, right after creating a namespace:
 * the services learn of a new namespace, and of attributes added to it, through caches refreshed
 * every few seconds, so a call can say "not found" and a listing can lack attributes just created.
 * The job must wait that out, register every attribute, and exit 0 only once all are listed.
 */
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES } from '../../src/core/search-attributes';
import { createNamespace, runSetupJob } from '../support/compose-setup-job';

jest.setTimeout(180_000);

it('registers the attributes on a namespace created a moment before, and waits until the cluster lists them', async () => {
  const address = process.env.TEMPORAL_ADDRESS!;
  const namespace = `compose-job-${Date.now().toString(36)}`;
  createNamespace(address, namespace);
  const run = await runSetupJob(address, namespace, 120);
  const waits = run.stdout.split('\n').filter((l) => l.includes('waiting for namespace'));
  const created = run.stdout.split('\n').filter((l) => l.includes(': created '));
  console.log(`compose job on the cluster: exit ${run.code} after ${(run.ms / 1000).toFixed(1)} s, ${created.length} created, ${waits.length} wait(s)${waits[0] ? `, first: ${waits[0]}` : ''}`);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  expect(run.stdout).toContain(`namespace ${namespace} on ${address} has all mcp-turns search attributes`);
  expect(created).toHaveLength(SEARCH_ATTRIBUTES.length);

  const connection = await Connection.connect({ address });
  try {
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    expect(Object.keys(listed.customAttributes ?? {}).sort()).toEqual(SEARCH_ATTRIBUTES.map((k) => k.name).sort());
  } finally {
    await connection.close();
  }
});
