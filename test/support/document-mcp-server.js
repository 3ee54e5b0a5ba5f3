#!/usr/bin/env node
// A real stdio MCP server for tests with large tool results: `read_document` answers a text of
// `bytes` characters (default 100 000) made from the document's name, so each name gives its own
// content and the same name always the same. With $COUNT_FILE set, every call appends one JSON line
// to it before answering, so a test can prove a completed call never ran twice.
// $MCP_FIXTURE_ERA=modern serves the 2026-07-28 era, otherwise the legacy era (serve-fixture.js).
const { createHash } = require('node:crypto');
const { z } = require('zod');
const { recordCall, serveTools } = require('./serve-fixture');

/** `bytes` characters: the name, then hex digests chained from it. */
function documentText(name, bytes) {
  const parts = [`document ${name}\n`];
  let length = parts[0].length;
  let digest = name;
  while (length < bytes) {
    digest = createHash('sha256').update(digest).digest('hex');
    parts.push(digest);
    length += digest.length;
  }
  return parts.join('').slice(0, bytes);
}

serveTools({ name: 'documents', version: '1.0.0' }, [
  {
    name: 'read_document',
    description: 'Reads a document by name: a text of `bytes` characters (default 100000)',
    inputSchema: { name: z.string(), bytes: z.number().int().min(1).optional() },
    run: async ({ name, bytes }) => {
      recordCall('read_document', { name });
      return { content: [{ type: 'text', text: documentText(name, bytes ?? 100_000) }] };
    },
  },
]);
