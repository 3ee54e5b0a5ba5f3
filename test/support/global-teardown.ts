import fs from 'node:fs';
import type { TestWorkflowEnvironment } from '@temporalio/testing';

export default async function globalTeardown(): Promise<void> {
  const env = (globalThis as { __TEMPORAL_ENV__?: TestWorkflowEnvironment }).__TEMPORAL_ENV__;
  await env?.teardown();
  const payloadDir = process.env.MCP_TURNS_TEST_PAYLOAD_DIR;
  if (payloadDir) fs.rmSync(payloadDir, { recursive: true, force: true });
}
