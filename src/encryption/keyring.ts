/**
 * The keys payloads are encrypted with: a JSON file
 * `{"current": "k2", "keys": [{"id": "k1", "key": "<base64 of 32 bytes>"}, …]}`, named by
 * `MCP_TURNS_KEYRING` or the config's `encryption.keyring`. New payloads are encrypted under the
 * current key; any key in the ring decrypts. Rotation has two phases: add the new key to every
 * process's ring (`mcp-turns keys new`), then make it current (`mcp-turns keys use ID`); a process
 * that meets a key it lacks says which.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** AES-256 keys: 32 bytes. */
export const KEY_BYTES = 32;

/** A key id: it names the key in every payload's metadata, so it is short and plain. */
export const KEY_ID_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** A keyring that cannot be used; the message names the file and the field. */
export class KeyringError extends Error {
  override name = 'KeyringError';
}

export interface Keyring {
  /** The file it was read from. */
  file: string;
  /** The id new payloads are encrypted under. */
  current: string;
  /** Every key, by id. */
  keys: ReadonlyMap<string, Buffer>;
}

const keyIdSchema = z.string().regex(KEY_ID_PATTERN, 'must be 1 to 64 letters, digits, "_", "." or "-"');

const keyringFileSchema = z.strictObject({
  current: keyIdSchema,
  keys: z
    .array(
      z.strictObject({
        id: keyIdSchema,
        key: z
          .string()
          .refine((text) => /^[A-Za-z0-9+/]*={0,2}$/.test(text) && Buffer.from(text, 'base64').length === KEY_BYTES, {
            message: `must be the base64 of ${KEY_BYTES} random bytes (mcp-turns keys new makes one)`,
          }),
      }),
    )
    .min(1, 'must hold at least one key'),
});

type KeyringFile = z.infer<typeof keyringFileSchema>;

function fieldPath(issuePath: PropertyKey[], file: KeyringFile | undefined): string {
  return issuePath
    .map((part, i) => {
      if (typeof part !== 'number') return `${i ? '.' : ''}${String(part)}`;
      const id = issuePath[i - 1] === 'keys' ? file?.keys?.[part]?.id : undefined;
      return typeof id === 'string' ? `[${part}] (${id})` : `[${part}]`;
    })
    .join('');
}

/** Checks a keyring file's content; `file` names it in the error. */
export function parseKeyring(text: string, file: string): Keyring {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new KeyringError(`keyring ${file} is not JSON: ${(err as Error).message}`);
  }
  const parsed = keyringFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = fieldPath(issue.path, json as KeyringFile);
    throw new KeyringError(`keyring ${file}: ${where || 'the file'} ${issue.message.replace(/^Invalid input: /, '')}`);
  }
  const keys = new Map<string, Buffer>();
  for (const { id, key } of parsed.data.keys) {
    if (keys.has(id)) throw new KeyringError(`keyring ${file}: keys holds the id ${id} twice`);
    keys.set(id, Buffer.from(key, 'base64'));
  }
  if (!keys.has(parsed.data.current)) {
    throw new KeyringError(`keyring ${file}: current names ${parsed.data.current}, which is not in keys (${[...keys.keys()].join(', ')})`);
  }
  return { file, current: parsed.data.current, keys };
}

/** Reads and checks a keyring file. Throws {@link KeyringError}. */
export function loadKeyring(file: string): Keyring {
  const resolved = path.resolve(file);
  let text: string;
  try {
    text = fs.readFileSync(resolved, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'does not exist (mcp-turns keys new --keyring FILE makes one)' : `cannot be read: ${(err as Error).message}`;
    throw new KeyringError(`keyring ${resolved} ${why}`);
  }
  return parseKeyring(text, resolved);
}

function writeKeyringFile(file: string, content: KeyringFile): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // Written aside with mode 0600 and renamed, so no reader sees half a ring and no one else reads it.
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.partial`;
  fs.writeFileSync(partial, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(partial, file);
}

function readForChange(file: string): KeyringFile | undefined {
  if (!fs.existsSync(file)) return undefined;
  const ring = loadKeyring(file);
  return {
    current: ring.current,
    keys: [...ring.keys].map(([id, key]) => ({ id, key: key.toString('base64') })),
  };
}

/** The next free id of the form `k<n>`. */
function nextKeyId(file: KeyringFile | undefined): string {
  const taken = new Set(file?.keys.map((k) => k.id));
  for (let n = (file?.keys.length ?? 0) + 1; ; n++) if (!taken.has(`k${n}`)) return `k${n}`;
}

/**
 * Adds a new random key to the keyring file (made, mode 0600, when missing). It becomes current only
 * in a new file: in an existing ring it waits until every process has it (`useKey`).
 */
export function addNewKey(file: string, id?: string): { id: string; current: boolean } {
  const resolved = path.resolve(file);
  const content = readForChange(resolved);
  const keyId = id ?? nextKeyId(content);
  if (!KEY_ID_PATTERN.test(keyId)) throw new KeyringError(`key id ${JSON.stringify(keyId)} must be 1 to 64 letters, digits, "_", "." or "-"`);
  if (content?.keys.some((k) => k.id === keyId)) throw new KeyringError(`keyring ${resolved} already holds a key ${keyId}`);
  const key = { id: keyId, key: randomBytes(KEY_BYTES).toString('base64') };
  const next: KeyringFile = content ? { ...content, keys: [...content.keys, key] } : { current: keyId, keys: [key] };
  writeKeyringFile(resolved, next);
  return { id: keyId, current: next.current === keyId };
}

/** Makes `id`, already in the ring, the key new payloads are encrypted under. */
export function useKey(file: string, id: string): { previous: string } {
  const resolved = path.resolve(file);
  const content = readForChange(resolved);
  if (!content) throw new KeyringError(`keyring ${resolved} does not exist (mcp-turns keys new --keyring FILE makes one)`);
  if (!content.keys.some((k) => k.id === id)) {
    throw new KeyringError(`keyring ${resolved} holds no key ${id} (it holds ${content.keys.map((k) => k.id).join(', ')})`);
  }
  writeKeyringFile(resolved, { ...content, current: id });
  return { previous: content.current };
}

/** A keyring file as it is now: read again when it changes, checked at most every `intervalMs`. */
export interface KeyringSource {
  /** The ring, re-read first when the file changed since the last look (and the interval passed). */
  current(): Keyring;
  /** Looks at the file now, whatever the interval (a payload named a key the ring lacks). */
  refresh(): Keyring;
}

/**
 * Follows a keyring file, so `keys new` and `keys use` reach running processes without a restart.
 * The first read must succeed (a bad ring stops the process at start); a later bad version is
 * reported to `onError` once and the ring read before stays in use.
 */
export function followKeyring(
  file: string,
  opts: { intervalMs?: number; onChange?: (ring: Keyring, before: Keyring) => void; onError?: (err: Error) => void } = {},
): KeyringSource {
  const resolved = path.resolve(file);
  const intervalMs = opts.intervalMs ?? 2000;
  const stamp = (): string => {
    try {
      const s = fs.statSync(resolved);
      return `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      return 'missing';
    }
  };
  let ring = loadKeyring(resolved);
  let seen = stamp();
  let lastLook = Date.now();
  const look = (): Keyring => {
    lastLook = Date.now();
    const now = stamp();
    if (now === seen) return ring;
    seen = now;
    try {
      const next = loadKeyring(resolved);
      const before = ring;
      ring = next;
      opts.onChange?.(next, before);
    } catch (err) {
      opts.onError?.(err as Error);
    }
    return ring;
  };
  return {
    current: () => (Date.now() - lastLook >= intervalMs ? look() : ring),
    refresh: look,
  };
}
