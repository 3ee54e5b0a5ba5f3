/**
 * Where a worker keeps what OAuth gave it for one remote MCP server: tokens, the client registration
 * obtained by dynamic registration, and the discovered metadata. Worker-side only: nothing here ever
 * enters workflow input, results or history.
 *
 * The default is one JSON file per server, written with mode 0600 (its folder 0700) by replacing the
 * file whole, and read again whenever it changed on disk, so `mcp-turns auth` run beside a live
 * worker, or another worker on the same machine that refreshed first, is picked up without a
 * restart. Anything else (a secrets manager, a database) plugs in through {@link TokenStore}.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type {
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';

/** What is kept for one server. */
export interface OAuthRecord {
  /** The server URL these credentials belong to; a record for another URL is ignored. */
  url: string;
  /** The tokens as the authorization server issued them, with the `issuer` the SDK stamps them with. */
  tokens?: StoredOAuthTokens;
  /** When `tokens` were received (epoch ms): with `expires_in`, when they expire. */
  tokensReceivedAt?: number;
  /** A client registered dynamically (or a metadata-document client id), with its `issuer`. */
  clientInformation?: StoredOAuthClientInformation;
  /** Protected resource and authorization server metadata, so a restart need not discover again. */
  discoveryState?: OAuthDiscoveryState;
  /** A scope a server asked for that the stored grant lacks (a person must authorize again). */
  pendingScope?: string;
}

/** A place to keep one server's {@link OAuthRecord}. Implement it to keep tokens elsewhere. */
export interface TokenStore {
  /** The stored record, or undefined when there is none. Called often: keep it cheap. */
  load(): Promise<OAuthRecord | undefined>;
  /** Replaces the stored record. */
  save(record: OAuthRecord): Promise<void>;
}

/** The default token file of a server: `<state dir>/oauth/<server>.json`. */
export function defaultTokenFile(server: string, dir: string): string {
  return path.join(dir, 'oauth', `${server}.json`);
}

/** A {@link TokenStore} in one file, mode 0600; see the file comment. */
export class FileTokenStore implements TokenStore {
  private cached?: { stamp: string; record: OAuthRecord | undefined };

  constructor(readonly file: string) {}

  async load(): Promise<OAuthRecord | undefined> {
    let stat: fs.Stats;
    try {
      stat = await fs.promises.stat(this.file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    const stamp = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    if (this.cached?.stamp === stamp) return this.cached.record;
    const text = await fs.promises.readFile(this.file, 'utf8');
    let record: OAuthRecord | undefined;
    try {
      record = JSON.parse(text) as OAuthRecord;
    } catch {
      throw new Error(`token file ${this.file} is not valid JSON (delete it and run mcp-turns auth again)`);
    }
    this.cached = { stamp, record };
    return record;
  }

  async save(record: OAuthRecord): Promise<void> {
    await fs.promises.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 });
    // A new file renamed over the old one: readers never see half a file, and the mode is set
    // before any secret is written.
    const tmp = `${this.file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await fs.promises.open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(record, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.rename(tmp, this.file);
    this.cached = undefined;
  }
}

/** A {@link TokenStore} in memory: tokens live as long as the process (client credentials, tests). */
export class MemoryTokenStore implements TokenStore {
  private record?: OAuthRecord;

  async load(): Promise<OAuthRecord | undefined> {
    return this.record;
  }

  async save(record: OAuthRecord): Promise<void> {
    this.record = structuredClone(record);
  }
}
