/**
 * The workflow bundle a worker runs. `npm run build` writes it once, next to the compiled code
 * (`dist/workflow-bundle.js`, plus a fingerprint of the code it was made from), and its variant for
 * encryption (`dist/workflow-bundle-encrypted.js`: failures keep their message in encoded
 * attributes, src/encryption/encoded-failure-converter.ts); a worker started from `dist/` loads
 * the one it needs when the fingerprint still matches and otherwise bundles at start. Why: bundling inside the worker costs ~1.5 s at start and ~85 MB of peak RSS (webpack
 * stays loaded), which a long-running batch worker should not carry.
 *
 *   node dist/src/worker/workflow-bundle.js   # what `npm run build` runs
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode, type WorkerOptions } from '@temporalio/worker';
import { workflowsPath } from './workflows-path';

/** The compiled tree's root (`dist/`) when running from it, else undefined (running from source). */
function distRoot(): string | undefined {
  const entry = workflowsPath();
  return entry.endsWith('.js') ? path.resolve(path.dirname(entry), '..') : undefined;
}

/** Which bundle: the plain one, or the one whose failure converter encodes failure messages (encryption on). */
export type BundleVariant = 'plain' | 'encrypted';

function bundleFiles(root: string, variant: BundleVariant = 'plain'): { code: string; meta: string } {
  return {
    code: path.join(root, variant === 'plain' ? 'workflow-bundle.js' : 'workflow-bundle-encrypted.js'),
    meta: path.join(root, 'workflow-bundle.json'),
  };
}

/** The compiled failure converter the encrypted variant bundles. */
function encodedFailureConverterPath(root: string): string {
  return path.join(root, 'src', 'encryption', 'encoded-failure-converter.js');
}

function listJs(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listJs(path.join(dir, e.name)) : e.name.endsWith('.js') ? [path.join(dir, e.name)] : []));
}

/**
 * What the bundle depends on: the compiled workflows and the core they import (a superset is fine),
 * by content, and the workflow SDK's version.
 */
export function workflowCodeFingerprint(root: string): string {
  const hash = crypto.createHash('sha256');
  const files = [...listJs(path.join(root, 'workflows')), ...listJs(path.join(root, 'src', 'core')), encodedFailureConverterPath(root)];
  for (const file of files.filter((f) => fs.existsSync(f)).sort()) {
    hash.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  }
  const sdk = JSON.parse(fs.readFileSync(require.resolve('@temporalio/workflow/package.json'), 'utf8')) as { version: string };
  hash.update(`@temporalio/workflow@${sdk.version}`);
  return hash.digest('hex');
}

/** The fingerprint of the code the prebuilt bundles were made from; undefined when there are none. */
function prebuiltFingerprint(metaFile: string): string | undefined {
  try {
    return (JSON.parse(fs.readFileSync(metaFile, 'utf8')) as { fingerprint?: string }).fingerprint;
  } catch {
    return undefined;
  }
}

/** Bundles the compiled workflows into `dist/workflow-bundle.js` and its encrypted variant, with their fingerprint. */
export async function writeWorkflowBundle(): Promise<string[]> {
  const root = distRoot();
  if (!root) throw new Error('mcp-turns: build first (tsc); the bundle is made from the compiled workflows in dist/');
  const files = bundleFiles(root, 'plain');
  const encryptedFiles = bundleFiles(root, 'encrypted');
  const fingerprint = workflowCodeFingerprint(root);
  // Made from this very code already (`npm test` builds again after `npm ci` built): nothing to do.
  if (prebuiltFingerprint(files.meta) === fingerprint && fs.existsSync(files.code) && fs.existsSync(encryptedFiles.code)) return [files.code, encryptedFiles.code];
  const [plain, encrypted] = await Promise.all([
    bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: quietBundlerLogger }),
    bundleWorkflowCode({ workflowsPath: workflowsPath(), failureConverterPath: encodedFailureConverterPath(root), logger: quietBundlerLogger }),
  ]);
  fs.writeFileSync(files.code, plain.code);
  fs.writeFileSync(encryptedFiles.code, encrypted.code);
  fs.writeFileSync(files.meta, JSON.stringify({ fingerprint, bytes: plain.code.length }, null, 2));
  return [files.code, encryptedFiles.code];
}

/**
 * Worker options naming the workflow code: the prebuilt bundle when it matches the compiled code,
 * else the workflows path (the worker bundles at start). `reason` says which and why, for the log.
 */
export function workflowSource(
  variant: BundleVariant = 'plain',
  root: string | undefined = distRoot(),
): {
  source: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'>;
  reason: string;
} {
  if (!root) return { source: { workflowsPath: workflowsPath() }, reason: 'bundled at start from source' };
  const files = bundleFiles(root, variant);
  const bundleAtStart = { workflowsPath: path.join(root, 'workflows', 'index.js') };
  const fingerprint = prebuiltFingerprint(files.meta);
  if (fingerprint === undefined) return { source: bundleAtStart, reason: 'bundled at start: no prebuilt bundle (npm run build makes one)' };
  if (fingerprint !== workflowCodeFingerprint(root) || !fs.existsSync(files.code)) {
    return { source: bundleAtStart, reason: 'bundled at start: the prebuilt bundle is older than the code (npm run build)' };
  }
  return { source: { workflowBundle: { codePath: files.code } }, reason: `prebuilt ${files.code}` };
}

/** Logger for bundleWorkflowCode: its warnings and errors only. */
export const quietBundlerLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message: string) => console.warn(message),
  error: (message: string) => console.error(message),
};

if (require.main === module) {
  writeWorkflowBundle().then(
    (files) => console.log(`mcp-turns: workflow bundles ${files.join(', ')}`),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
