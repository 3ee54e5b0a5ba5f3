/**
 * The codec server: Temporal's codec server protocol over HTTP, so the Web UI (and `temporal`
 * with `--codec-endpoint`) shows encrypted payloads decrypted to the people allowed to see them.
 *
 * - `POST /decode` and `POST /encode` take `{"payloads": [{"metadata": {k: base64}, "data": base64}]}`
 *   and answer the same shape. Decoding first fetches payloads kept in External Storage, so the UI
 *   shows stored payloads too; a payload the codec cannot read is answered as it came (the UI shows
 *   it encoded) and counted in the log line.
 * - Who may call: the `Host` must be one of the server's names, a browser's `Origin` one of the UI
 *   origins (CORS answers them, credentials included), and, with tokens, `Authorization: Bearer`
 *   one of them (constant-time). Bound beyond loopback, tokens are required.
 * - Nothing decoded is logged: one line per request with the namespace, the count and the caller.
 */
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import cors from '@fastify/cors';
import { z } from 'zod';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow/external-storage-runner';
import { isReferencePayload } from '@temporalio/common/lib/internal-non-workflow/extstore-helpers';
import type { ExternalStorage } from '@temporalio/common';
import { allowedHostsOf, bearerCaller } from '../serve/request-guard';
import { oneLine } from '../core/text';
import type { ServeToken } from '../config/serve-settings';

declare module 'fastify' {
  interface FastifyRequest {
    /** The name of the codec server token the request presented (`local` without tokens). */
    codecCaller: string;
  }
}

export interface CodecServerSettings {
  host: string;
  port: number;
  /** Browser origins that may call (the Temporal UI's), e.g. `http://127.0.0.1:8233`. */
  uiOrigins: string[];
  /** Bearer tokens; none = no Authorization asked (loopback only). */
  tokens: ServeToken[];
  /** More host names (with port) requests may name. */
  allowedHosts: string[];
}

export interface CodecServerOptions {
  settings: CodecServerSettings;
  codecs: PayloadCodec[];
  externalStorage?: ExternalStorage;
  /** One line per request (never a payload). */
  log?: (line: string) => void;
}

const Base64 = z.string().regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'must be base64');
const PayloadJson = z.object({ metadata: z.record(z.string(), Base64).optional(), data: Base64.optional() });
const CodecBody = z.object({ payloads: z.array(PayloadJson) });
/** A payload as the codec server protocol writes it: metadata values and data in base64. */
export type PayloadJson = z.infer<typeof PayloadJson>;

function fromJson(p: PayloadJson): Payload {
  const metadata: Record<string, Uint8Array> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) metadata[k] = Buffer.from(v, 'base64');
  return { metadata, data: Buffer.from(p.data ?? '', 'base64') };
}

/** `p` in the protocol's JSON shape. */
export function payloadToJson(p: Payload): PayloadJson {
  const metadata: Record<string, string> = {};
  for (const [k, v] of Object.entries(p.metadata ?? {})) if (v) metadata[k] = Buffer.from(v).toString('base64');
  return { metadata, data: Buffer.from(p.data ?? new Uint8Array()).toString('base64') };
}

export async function buildCodecServerApp(opts: CodecServerOptions): Promise<FastifyInstance> {
  const { settings } = opts;
  const log = opts.log ?? (() => undefined);
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 * 1024, forceCloseConnections: true });
  const port = (): number => (app.server.address() as AddressInfo | null)?.port ?? settings.port;
  const storage = opts.externalStorage ? new ExternalStorageRunner(opts.externalStorage) : undefined;
  const names = { host: settings.host, allowedHosts: settings.allowedHosts.map((h) => h.toLowerCase()) };

  app.decorateRequest('codecCaller', '');
  app.addHook('onRequest', async (request, reply) => {
    const host = (request.headers.host ?? '').toLowerCase();
    if (!allowedHostsOf(names, port()).has(host)) {
      return reply.code(403).send({ error: `Host ${oneLine(host, 100) || '(none)'} is not one of this codec server's names` });
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !settings.uiOrigins.includes(origin)) {
      return reply.code(403).send({ error: `Origin ${oneLine(origin, 100)} is not a UI origin of this codec server: add it with --ui-origin` });
    }
    request.codecCaller = 'local';
    if (request.method === 'OPTIONS' || settings.tokens.length === 0) return;
    const caller = bearerCaller(settings.tokens, request.headers.authorization, 'the codec server tokens');
    if ('refusal' in caller) return reply.code(401).header('www-authenticate', 'Bearer').send({ error: caller.refusal });
    request.codecCaller = caller.name;
  });
  await app.register(cors, {
    origin: settings.uiOrigins,
    credentials: true,
    methods: ['POST'],
    allowedHeaders: ['content-type', 'authorization', 'x-namespace'],
    maxAge: 600,
  });

  const body = async (request: { body: unknown }): Promise<Payload[]> => {
    const parsed = CodecBody.safeParse(request.body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw Object.assign(new Error(`body.${issue.path.join('.')}: ${issue.message}`), { statusCode: 400 });
    }
    return parsed.data.payloads.map(fromJson);
  };
  const who = (request: FastifyRequest): string => `namespace ${String(request.headers['x-namespace'] ?? '(none)')}, caller ${request.codecCaller}`;

  app.post('/decode', async (request) => {
    const payloads = await body(request);
    let unreadable = 0;
    let why = '';
    const decoded = await Promise.all(
      payloads.map(async (payload) => {
        try {
          let current = storage && isReferencePayload(payload) ? await storage.retrieve([payload]) : [payload];
          for (const codec of [...opts.codecs].reverse()) current = await codec.decode(current);
          return current[0]!;
        } catch (err) {
          unreadable++;
          why ||= `: ${(err as Error).message.split('\n')[0]}`;
          return payload;
        }
      }),
    );
    log(`decode: ${payloads.length} payload(s), ${unreadable} unreadable (${who(request)})${why}`);
    return { payloads: decoded.map(payloadToJson) };
  });

  app.post('/encode', async (request) => {
    let payloads = await body(request);
    for (const codec of opts.codecs) payloads = await codec.encode(payloads);
    log(`encode: ${payloads.length} payload(s) (${who(request)})`);
    return { payloads: payloads.map(payloadToJson) };
  });

  app.setErrorHandler((err: Error & { statusCode?: number }, _request, reply) => {
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    void reply.code(status).send({ error: status === 500 ? 'the codec server failed; see its log' : err.message.split('\n')[0] });
    if (status === 500) log(`error: ${err.message.split('\n')[0]}`);
  });
  app.setNotFoundHandler((request, reply) => reply.code(404).send({ error: `no route ${request.method} ${request.url.split('?')[0]} (POST /decode, POST /encode)` }));
  return app;
}
