/**
 * A real S3-compatible server for tests: Versity's S3 gateway (versitygw) with its posix backend on
 * a temporary directory, on a free loopback port. The binary is built from its Go module with
 * `go install` the first time a machine needs it (a few minutes) and kept in a per-machine cache
 * (`$XDG_CACHE_HOME/mcp-turns`, default `~/.cache/mcp-turns`); `MCP_TURNS_S3_SERVER_BIN` names a
 * binary to use instead.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort, portIsOpen } from '../../src/temporal/dev-server';

export const VERSITYGW_PACKAGE = 'github.com/versity/versitygw/cmd/versitygw';
export const VERSITYGW_VERSION = 'v1.8.0';

const ACCESS_KEY_ID = 'mcp-turns-test';
const SECRET_ACCESS_KEY = 'mcp-turns-test-secret';
const REGION = 'us-east-1';

/** The per-machine cache the harness builds tools into. */
export function testToolCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'mcp-turns');
}

function goBinary(): string {
  for (const candidate of ['go', '/usr/local/go/bin/go']) {
    if (spawnSync(candidate, ['version'], { stdio: 'ignore' }).status === 0) return candidate;
  }
  throw new Error(
    `the S3 tests build Versity's S3 gateway (${VERSITYGW_PACKAGE}@${VERSITYGW_VERSION}) with Go, and no go command was found: install Go, or set MCP_TURNS_S3_SERVER_BIN to a versitygw binary`,
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `go install` into a directory of its own; resolves with the built binary. */
function goInstall(go: string, into: string, log: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(go, ['install', `${VERSITYGW_PACKAGE}@${VERSITYGW_VERSION}`], {
      env: { ...process.env, GOBIN: into, GOFLAGS: '-mod=mod' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const tail: string[] = [];
    child.stderr.on('data', (d: Buffer) => {
      for (const line of d.toString().split('\n').filter(Boolean)) {
        tail.push(line);
        if (tail.length > 10) tail.shift();
      }
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code === 0) resolve(path.join(into, 'versitygw'));
      else reject(new Error(`go install ${VERSITYGW_PACKAGE}@${VERSITYGW_VERSION} failed (${code}): ${tail.join(' | ')}`));
    });
    log(`building ${VERSITYGW_PACKAGE}@${VERSITYGW_VERSION} into ${into} (first time on this machine: a few minutes)`);
  });
}

/**
 * The versitygw binary: `MCP_TURNS_S3_SERVER_BIN`, else the cached build, else built now. Several
 * test processes asking at once build it once: the first takes a lock directory, the others wait for
 * the binary (a lock older than 30 minutes is taken to be left by a killed build).
 */
export async function s3ServerBinary(log: (line: string) => void = () => undefined): Promise<string> {
  const given = process.env.MCP_TURNS_S3_SERVER_BIN;
  if (given) return given;
  const dir = path.join(testToolCacheDir(), `versitygw-${VERSITYGW_VERSION}`);
  const binary = path.join(dir, 'versitygw');
  const lock = `${dir}.lock`;
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  for (;;) {
    if (fs.existsSync(binary)) return binary;
    try {
      fs.mkdirSync(lock);
      break;
    } catch {
      const held = fs.statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > 30 * 60_000) fs.rmSync(lock, { recursive: true, force: true });
      else await sleep(2000);
    }
  }
  try {
    if (fs.existsSync(binary)) return binary;
    const t0 = Date.now();
    const built = await goInstall(goBinary(), lock, log);
    fs.mkdirSync(dir, { recursive: true });
    fs.renameSync(built, binary);
    log(`built versitygw in ${((Date.now() - t0) / 1000).toFixed(0)} s: ${binary}`);
    return binary;
  } finally {
    fs.rmSync(lock, { recursive: true, force: true });
  }
}

export interface S3Server {
  /** `http://127.0.0.1:PORT` */
  endpoint: string;
  region: string;
  credentials: { accessKeyId: string; secretAccessKey: string };
  /** The posix backend's root: one directory per bucket. */
  dataDir: string;
  /** A client for the server (path-style addressing). */
  client: S3Client;
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

/** Starts versitygw (building it first if this machine has none) and waits until it accepts connections. */
export async function startS3Server(log?: (line: string) => void): Promise<S3Server> {
  const binary = await s3ServerBinary(log);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-turns-s3-'));
  const port = await freePort();
  const child = spawn(binary, ['--port', `127.0.0.1:${port}`, '--quiet', 'posix', dataDir], {
    env: { ...process.env, ROOT_ACCESS_KEY_ID: ACCESS_KEY_ID, ROOT_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY, VGW_REGION: REGION },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2000)));
  child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-2000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let hasExited = false;
  void exited.then(() => (hasExited = true));
  const deadline = Date.now() + 30_000;
  while (!(await portIsOpen('127.0.0.1', port, 500))) {
    if (hasExited || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`versitygw did not start on 127.0.0.1:${port}: ${output.trim()}`);
    }
    await sleep(100);
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const credentials = { accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY };
  const client = new S3Client({ endpoint, region: REGION, forcePathStyle: true, credentials });
  return {
    endpoint,
    region: REGION,
    credentials,
    dataDir,
    client,
    async createBucket(name) {
      await client.send(new CreateBucketCommand({ Bucket: name }));
    },
    async stop() {
      client.destroy();
      if (!hasExited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
