#!/usr/bin/env node
// A legacy-era stdio MCP server (the v1 SDK, 2025-11-25) whose tool asks the person during the call:
// `confirm_order` ({ orderId }) sends `elicitation/create` (a form: confirm, a boolean, and an
// optional note) on the live session and answers with what came back. With $COUNT_FILE set, every
// call appends one JSON line to it (the answer included).
const fs = require('node:fs');
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { z } = require('zod');

const record = (line) => process.env.COUNT_FILE && fs.appendFileSync(process.env.COUNT_FILE, JSON.stringify(line) + '\n');
const server = new McpServer({ name: 'legacy-elicit', version: '1.0.0' });

server.registerTool(
  'confirm_order',
  { description: 'Asks the person to confirm an order', inputSchema: { orderId: z.string() } },
  async ({ orderId }) => {
    const answer = await server.server.elicitInput({
      message: `Confirm order ${orderId}?`,
      requestedSchema: {
        type: 'object',
        properties: { confirm: { type: 'boolean', title: 'Confirm' }, note: { type: 'string', title: 'Note' } },
        required: ['confirm'],
      },
    });
    record({ tool: 'confirm_order', orderId, action: answer.action, content: answer.content });
    const text = answer.action === 'accept' ? `order ${orderId}: ${answer.content.confirm ? 'confirmed' : 'not confirmed'}${answer.content.note ? ` (${answer.content.note})` : ''}` : `order ${orderId}: the person said ${answer.action}`;
    return { content: [{ type: 'text', text }] };
  },
);

server.connect(new StdioServerTransport()).catch((err) => {
  console.error(err);
  process.exit(1);
});
