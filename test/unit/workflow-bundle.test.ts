import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { workflowCodeFingerprint, workflowSource } from '../../src/worker/workflow-bundle';

/** A stand-in for dist/: compiled workflows and core, plus (optionally) a bundle and its fingerprint. */
function fakeDist(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-dist-'));
  fs.mkdirSync(path.join(root, 'workflows'));
  fs.mkdirSync(path.join(root, 'src', 'core'), { recursive: true });
  fs.writeFileSync(path.join(root, 'workflows', 'index.js'), 'exports.a = 1;');
  fs.writeFileSync(path.join(root, 'src', 'core', 'x.js'), 'exports.x = 1;');
  return root;
}

function writeBundle(root: string, fingerprint: string): void {
  fs.writeFileSync(path.join(root, 'workflow-bundle.js'), '/* bundle */');
  fs.writeFileSync(path.join(root, 'workflow-bundle.json'), JSON.stringify({ fingerprint }));
}

describe('prebuilt workflow bundle', () => {
  it('is used while it matches the compiled code', () => {
    const root = fakeDist();
    writeBundle(root, workflowCodeFingerprint(root));
    const { source, reason } = workflowSource('plain', root);
    expect(source).toEqual({ workflowBundle: { codePath: path.join(root, 'workflow-bundle.js') } });
    expect(reason).toMatch(/^prebuilt /);
  });

  it('is not used once a workflow or core file changes: the worker bundles at start and says why', () => {
    const root = fakeDist();
    writeBundle(root, workflowCodeFingerprint(root));
    fs.writeFileSync(path.join(root, 'src', 'core', 'x.js'), 'exports.x = 2;');
    const { source, reason } = workflowSource('plain', root);
    expect(source).toEqual({ workflowsPath: path.join(root, 'workflows', 'index.js') });
    expect(reason).toMatch(/older than the code/);
  });

  it('has a variant for encryption, chosen by name', () => {
    const root = fakeDist();
    writeBundle(root, workflowCodeFingerprint(root));
    expect(workflowSource('encrypted', root).reason).toMatch(/no prebuilt bundle|older/);
    fs.writeFileSync(path.join(root, 'workflow-bundle-encrypted.js'), '/* encrypted bundle */');
    expect(workflowSource('encrypted', root).source).toEqual({ workflowBundle: { codePath: path.join(root, 'workflow-bundle-encrypted.js') } });
  });

  it('is not required: without one the worker bundles at start', () => {
    const root = fakeDist();
    expect(workflowSource('plain', root)).toEqual({
      source: { workflowsPath: path.join(root, 'workflows', 'index.js') },
      reason: expect.stringMatching(/no prebuilt bundle/),
    });
  });

  it('fingerprints content, not timestamps', () => {
    const root = fakeDist();
    const before = workflowCodeFingerprint(root);
    const file = path.join(root, 'workflows', 'index.js');
    fs.utimesSync(file, new Date(0), new Date(0));
    expect(workflowCodeFingerprint(root)).toBe(before);
    fs.writeFileSync(path.join(root, 'workflows', 'extra.js'), '');
    expect(workflowCodeFingerprint(root)).not.toBe(before);
  });
});
