/** `serve`'s app in the test process, on the shared dev server and a harness's task queue, listening on a free port. */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildServeApp } from '../../src/serve/serve-app';
import type { ServeSettings } from '../../src/config/serve-settings';
import { uiBaseUrl } from '../../src/client/ui-link';
import type { TurnHarness } from './turn-harness';

export interface ServedApp {
  app: FastifyInstance;
  /** `http://127.0.0.1:<port>` */
  base: string;
}

/**
 * Builds the app for `h`'s client and task queue with `settings`, and listens on `settings.host`, a
 * free port. The harness's worker runs in this process: the app knows its MCP servers, as `serve`
 * knows those of the worker it runs, unless `workerElsewhere` (as `serve` with a worker of its own elsewhere).
 * `taskQueue` puts its work on another queue (one no worker polls, say).
 */
export async function startServeApp(
  h: TurnHarness,
  settings: ServeSettings,
  uiUrl?: string,
  { workerElsewhere = false, taskQueue = h.taskQueue }: { workerElsewhere?: boolean; taskQueue?: string } = {},
): Promise<ServedApp> {
  const address = process.env.MCP_TURNS_TEST_TEMPORAL_ADDRESS!;
  const app = await buildServeApp({
    client: h.client,
    address,
    namespace: 'default',
    taskQueue,
    uiUrl: uiUrl ?? uiBaseUrl(address),
    settings,
    version: 'test',
    ...(workerElsewhere ? {} : { servers: h.pool.serverNames }),
    log: () => {},
  });
  await app.listen({ host: settings.host, port: 0 });
  return { app, base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

/** `n` numbered words (`w0 w1 …`): a reply long enough to be seen arriving. */
export function words(n: number, w: string): string {
  return Array.from({ length: n }, (_, i) => `${w}${i}`).join(' ');
}
