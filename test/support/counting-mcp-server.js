#!/usr/bin/env node
// A real stdio MCP server for tests that must count executions: every tool call appends one JSON
// line to $COUNT_FILE before answering, so a test can prove a completed call never ran twice.
const fs = require('node:fs');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const countFile = process.env.COUNT_FILE;
const record = (tool, args) => {
  if (countFile) fs.appendFileSync(countFile, JSON.stringify({ tool, args, pid: process.pid }) + '\n');
};

const server = new McpServer({ name: 'counting', version: '1.0.0' });

server.registerTool(
  'count',
  { description: 'Counts one call and echoes the label', inputSchema: { label: z.string() } },
  async ({ label }) => {
    record('count', { label });
    return { content: [{ type: 'text', text: `counted ${label}` }] };
  },
);

server.registerTool(
  'slow',
  { description: 'Waits ms milliseconds, then answers', inputSchema: { label: z.string(), ms: z.number() } },
  async ({ label, ms }, extra) => {
    record('slow', { label, ms });
    const token = extra._meta && extra._meta.progressToken;
    const started = Date.now();
    while (Date.now() - started < ms) {
      await new Promise((r) => setTimeout(r, Math.min(200, ms)));
      if (token !== undefined) {
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: Date.now() - started, total: ms },
        });
      }
    }
    return { content: [{ type: 'text', text: `slow ${label} done after ${ms} ms` }] };
  },
);

server.registerTool('fail', { description: 'Always fails at tool level', inputSchema: {} }, async () => {
  record('fail', {});
  return { isError: true, content: [{ type: 'text', text: 'this tool always fails' }] };
});

server.connect(new StdioServerTransport()).catch((err) => {
  console.error(err);
  process.exit(1);
});
