import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkerOptions } from '@temporalio/worker';
import { workflowsPath } from './workflows-path';

type BundlerOptions = NonNullable<WorkerOptions['bundlerOptions']>;

/**
 * Worker options that register the workflows of `teamWorkflowsPath` and mcp-turns' together: the
 * module from {@link combinedWorkflowsPath}, and a bundler hook that lets the bundle's entry (which
 * the bundler writes beside that module, in the temp directory) find `@temporalio/workflow` where
 * mcp-turns finds it. A hook already given runs first.
 */
export function combinedWorkflowsOptions(
  teamWorkflowsPath: string,
  bundlerOptions: BundlerOptions = {},
): { workflowsPath: string; bundlerOptions: BundlerOptions } {
  const modules = path.resolve(require.resolve('@temporalio/workflow/package.json'), '..', '..', '..');
  const given = bundlerOptions.webpackConfigHook;
  return {
    workflowsPath: combinedWorkflowsPath(teamWorkflowsPath),
    bundlerOptions: {
      ...bundlerOptions,
      webpackConfigHook: (config) => {
        const hooked = given ? given(config) : config;
        const resolve = hooked.resolve ?? {};
        return {
          ...hooked,
          resolve: { ...resolve, modules: [...(resolve.modules ?? ['node_modules']), modules] },
        };
      },
    },
  };
}

/**
 * A workflows module exporting everything `teamWorkflowsPath` exports plus mcp-turns' `chatTurn`,
 * `chatBatch`, `conversation` and `scheduledBatch` (a batch schedule's runs), for a worker that registers both (a worker takes one workflows module). Written
 * once per team module into the OS temp directory; the bundler reads both sources from there.
 * A name the team module exports itself is shadowed by mcp-turns' explicit export of it.
 */
export function combinedWorkflowsPath(teamWorkflowsPath: string): string {
  const team = path.resolve(teamWorkflowsPath);
  const ours = workflowsPath();
  const source =
    "// mcp-turns' worker plugin: the worker's own workflows and mcp-turns' workflows in one module.\n" +
    `export * from ${JSON.stringify(team)};\n` +
    `export { chatTurn, chatBatch, conversation, scheduledBatch } from ${JSON.stringify(ours)};\n`;
  const digest = crypto.createHash('sha256').update(source).digest('hex').slice(0, 16);
  const file = path.join(os.tmpdir(), 'mcp-turns-workflows', `${digest}.js`);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const partial = `${file}.${process.pid}`;
    fs.writeFileSync(partial, source);
    fs.renameSync(partial, file);
  }
  return file;
}
