import fs from 'node:fs';

/** Removes the run's payload directory (cluster-setup.ts); the cluster itself is left running. */
export default function clusterTeardown(): void {
  const payloadDir = process.env.MCP_TURNS_TEST_PAYLOAD_DIR;
  if (payloadDir) fs.rmSync(payloadDir, { recursive: true, force: true });
}
