/**
 * docker-compose's `temporal-setup` job outside Docker: its shell script, taken from
 * docker-compose.yml (compose's `$$` escapes undone), run with `sh` and the temporal CLI the tests
 * resolve, under the name the image has it (`temporal` on PATH), with the job's environment.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { parse } from 'yaml';
import { testTemporalCli } from './temporal-cli';

const root = path.resolve(__dirname, '..', '..');
const setup = (
  parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { command: string[]; environment: Record<string, string> }>;
  }
).services['temporal-setup']!;
const script = setup.command[0]!.replace(/\$\$/g, '$');

/** The attribute list the job registers, `Name=Type` words. */
export const JOB_ATTRIBUTES = setup.environment.MCP_TURNS_SEARCH_ATTRIBUTES!;

let binDir: string | undefined;

/** A directory holding `temporal` (made once per test file). */
function temporalBinDir(): string {
  if (!binDir) {
    binDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-setup-job-'));
    fs.symlinkSync(testTemporalCli().path, path.join(binDir, 'temporal'));
  }
  return binDir;
}

export interface JobRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs the job against `namespace` on `address`, waiting at most `waitSeconds` for it. */
export function runSetupJob(address: string, namespace: string, waitSeconds: number): Promise<JobRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', script], {
      env: {
        PATH: `${temporalBinDir()}:${process.env.PATH}`,
        HOME: os.tmpdir(),
        TEMPORAL_ADDRESS: address,
        TEMPORAL_NAMESPACE: namespace,
        MCP_TURNS_SEARCH_ATTRIBUTES: JOB_ATTRIBUTES,
        MCP_TURNS_SETUP_WAIT_SECONDS: String(waitSeconds),
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

/** `temporal operator namespace create` on `address`. */
export function createNamespace(address: string, namespace: string): void {
  execFileSync(testTemporalCli().path, ['operator', 'namespace', 'create', '--address', address, '--namespace', namespace]);
}
