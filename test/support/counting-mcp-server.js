#!/usr/bin/env node
// A real stdio MCP server for tests that must count executions: every tool call appends one JSON
// line to $COUNT_FILE before answering, so a test can prove a completed call never ran twice.
// $MCP_FIXTURE_ERA=modern serves the 2026-07-28 era, otherwise the legacy era (serve-fixture.js).
// A cancelled `slow` stops waiting and says so on stderr (`slow <label> cancelled`).
const { z } = require('zod');
const { recordCall, serveTools } = require('./serve-fixture');

serveTools({ name: 'counting', version: '1.0.0' }, [
  {
    name: 'count',
    description: 'Counts one call and echoes the label',
    inputSchema: { label: z.string() },
    run: async ({ label }) => {
      recordCall('count', { label });
      return { content: [{ type: 'text', text: `counted ${label}` }] };
    },
  },
  {
    name: 'slow',
    description: 'Waits ms milliseconds, then answers',
    inputSchema: { label: z.string(), ms: z.number() },
    run: async ({ label, ms }, call) => {
      recordCall('slow', { label, ms });
      const started = Date.now();
      while (Date.now() - started < ms) {
        await new Promise((r) => setTimeout(r, Math.min(200, ms)));
        if (call.signal.aborted) {
          console.error(`slow ${label} cancelled`);
          return { content: [{ type: 'text', text: `slow ${label} cancelled` }] };
        }
        await call.progress(Date.now() - started, ms);
      }
      return { content: [{ type: 'text', text: `slow ${label} done after ${ms} ms` }] };
    },
  },
  {
    name: 'fail',
    description: 'Always fails at tool level',
    inputSchema: {},
    run: async () => {
      recordCall('fail', {});
      return { isError: true, content: [{ type: 'text', text: 'this tool always fails' }] };
    },
  },
]);
