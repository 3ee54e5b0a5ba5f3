/**
 * The codec server's protocol and who may call it, over a real socket: /decode and /encode answer
 * Temporal's payload JSON; Host, Origin and bearer tokens are checked; CORS answers the UI origin.
 */
import http from 'node:http';
import { defaultPayloadConverter } from '@temporalio/common';
import type { FastifyInstance } from 'fastify';
import { buildCodecServerApp, payloadToJson, type CodecServerSettings } from '../../src/codec-server/codec-server-app';
import { EncryptionCodec } from '../../src/encryption/encryption-codec';

const UI = 'http://127.0.0.1:8233';
const codec = new EncryptionCodec({ keyring: { file: '/k/ring.json', current: 'k1', keys: new Map([['k1', Buffer.alloc(32, 3)]]) } });

async function start(settings: Partial<CodecServerSettings> = {}): Promise<{ app: FastifyInstance; url: string; log: string[] }> {
  const log: string[] = [];
  const app = await buildCodecServerApp({
    settings: { host: '127.0.0.1', port: 0, uiOrigins: [UI], tokens: [], allowedHosts: [], ...settings },
    codecs: [codec],
    log: (line) => log.push(line),
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url, log };
}

describe('codec server', () => {
  it('decodes what the codec encoded and encodes what it is given, and logs no payload', async () => {
    const { app, url, log } = await start();
    try {
      const [encrypted] = await codec.encode([defaultPayloadConverter.toPayload({ secret: 'CANARY-codec' })]);
      const post = (route: string, payloads: unknown[]) =>
        fetch(`${url}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-namespace': 'default' }, body: JSON.stringify({ payloads }) });
      const decoded = (await (await post('/decode', [payloadToJson(encrypted!)])).json()) as { payloads: Array<{ data: string }> };
      expect(Buffer.from(decoded.payloads[0]!.data, 'base64').toString()).toBe('{"secret":"CANARY-codec"}');
      const encoded = (await (await post('/encode', [payloadToJson(defaultPayloadConverter.toPayload('x'))])).json()) as { payloads: Array<{ metadata: Record<string, string> }> };
      expect(Buffer.from(encoded.payloads[0]!.metadata['encryption-key-id']!, 'base64').toString()).toBe('k1');
      const bad = await post('/decode', [{ data: 'not base64!' }]);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toBe('body.payloads.0.data: must be base64');
      expect(log).toEqual(['decode: 1 payload(s), 0 unreadable (namespace default, caller local)', 'encode: 1 payload(s) (namespace default, caller local)']);
      expect(log.join('\n')).not.toContain('CANARY');
    } finally {
      await app.close();
    }
  });

  it('answers the UI origin (CORS, credentials) and refuses other origins and hosts', async () => {
    const { app, url } = await start();
    try {
      const preflight = await fetch(`${url}/decode`, {
        method: 'OPTIONS',
        headers: { origin: UI, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-namespace,authorization' },
      });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get('access-control-allow-origin')).toBe(UI);
      expect(preflight.headers.get('access-control-allow-credentials')).toBe('true');
      const other = await fetch(`${url}/decode`, { method: 'POST', headers: { origin: 'http://evil.example', 'content-type': 'application/json' }, body: '{"payloads":[]}' });
      expect(other.status).toBe(403);
      expect(((await other.json()) as { error: string }).error).toBe('Origin http://evil.example is not a UI origin of this codec server: add it with --ui-origin');
      // A page whose DNS name was rebound to 127.0.0.1 names its own host.
      const port = Number(new URL(url).port);
      const rebound = await new Promise<number>((resolve, reject) => {
        const request = http.request({ host: '127.0.0.1', port, path: '/decode', method: 'POST', headers: { host: `attacker.example:${port}`, 'content-type': 'application/json' } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        request.on('error', reject);
        request.end('{"payloads":[]}');
      });
      expect(rebound).toBe(403);
    } finally {
      await app.close();
    }
  });

  it('asks for one of its bearer tokens when it has some', async () => {
    const { app, url, log } = await start({ tokens: [{ name: 'ops', token: 'a-long-codec-token-0123456789' }] });
    try {
      const call = (authorization?: string) =>
        fetch(`${url}/decode`, { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) }, body: '{"payloads":[]}' });
      expect((await call()).status).toBe(401);
      expect((await call('Bearer wrong-token-0123456789')).status).toBe(401);
      expect((await call('Bearer a-long-codec-token-0123456789')).status).toBe(200);
      expect(log).toEqual(['decode: 0 payload(s), 0 unreadable (namespace (none), caller ops)']);
    } finally {
      await app.close();
    }
  });
});
