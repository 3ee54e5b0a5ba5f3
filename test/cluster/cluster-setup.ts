/**
 * Global setup of the cluster suite: the cluster is the one TEMPORAL_ADDRESS names (never started
 * here), reachable, with mcp-turns' search attributes registered on its namespace. Clients and the
 * worker processes the tests start store payloads in one directory of this run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { SEARCH_ATTRIBUTES, searchAttributeCreateArgs } from '../../src/core/search-attributes';

export default async function clusterSetup(): Promise<void> {
  const address = process.env.TEMPORAL_ADDRESS;
  if (!address) {
    throw new Error('npm run test:cluster needs TEMPORAL_ADDRESS (host:port of a Temporal cluster; ../shared/cluster/start.sh prints it)');
  }
  const namespace = process.env.TEMPORAL_NAMESPACE ?? 'default';
  const connection = await Connection.connect({ address });
  try {
    const system = await connection.workflowService.getSystemInfo({});
    const listed = await connection.operatorService.listSearchAttributes({ namespace });
    const missing = SEARCH_ATTRIBUTES.filter((k) => !(k.name in (listed.customAttributes ?? {})));
    if (missing.length) {
      throw new Error(
        `namespace ${namespace} on ${address} lacks ${missing.map((k) => k.name).join(', ')}: ` +
          `temporal operator search-attribute create --address ${address} --namespace ${namespace} ${searchAttributeCreateArgs(missing).join(' ')}`,
      );
    }
    console.log(`\n[cluster-setup] Temporal ${system.serverVersion} at ${address}, namespace ${namespace}`);
  } finally {
    await connection.close();
  }
  const payloadDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-cluster-payloads-'));
  process.env.MCP_TURNS_STORAGE = `fs:${payloadDir}`;
  process.env.MCP_TURNS_TEST_PAYLOAD_DIR = payloadDir;
}
