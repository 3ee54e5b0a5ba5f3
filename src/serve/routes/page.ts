/**
 * The chat page: static files shipped with the package (src/serve/page/, copied beside the compiled
 * server by the build), read once at start and served with a content security policy that allows
 * only this server.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';

const PAGE_DIR = path.join(__dirname, '..', 'page');

const FILES: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/app.js': { file: 'app.js', type: 'text/javascript; charset=utf-8' },
  '/style.css': { file: 'style.css', type: 'text/css; charset=utf-8' },
};

const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'";

export function pageRoutes(app: FastifyInstance): void {
  for (const [url, { file, type }] of Object.entries(FILES)) {
    const body = fs.readFileSync(path.join(PAGE_DIR, file));
    app.get(url, { schema: { hide: true }, config: { open: true } }, async (_request, reply) =>
      reply.header('content-type', type).header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').header('cache-control', 'no-cache').send(body),
    );
  }
}
