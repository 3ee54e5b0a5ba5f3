import type { TestWorkflowEnvironment } from '@temporalio/testing';

export default async function globalTeardown(): Promise<void> {
  const env = (globalThis as { __TEMPORAL_ENV__?: TestWorkflowEnvironment }).__TEMPORAL_ENV__;
  await env?.teardown();
}
