#!/usr/bin/env node
// A 2026-07-28 MCP server for the chat page's questions test (test/ui/chat-page-input.test.ts), over
// stdio with MCP_FIXTURE_ERA=modern. Each tool first answers `input_required`, then answers the call
// sent again with the person's answer:
// - `plan_trip` ({ city }) asks a form of every kind of field an elicitation schema has (a titled
//   enum, an integer and a number with bounds, an e-mail, a date, a boolean, a string with a
//   length limit, a multi-select) and answers with the content exactly as it came, as JSON, so a test sees its types;
// - `verify_email` ({ address }) asks the person to visit a URL, then says whether they said done.
const { z } = require('zod');
const { inputRequired, inputResponse } = require('@modelcontextprotocol/server');
const { modernServer, recordCall } = require('../support/serve-fixture');

const TRIP_SCHEMA = {
  type: 'object',
  properties: {
    cabin: {
      type: 'string',
      title: 'Cabin',
      oneOf: [
        { const: 'economy', title: 'Economy' },
        { const: 'business', title: 'Business' },
      ],
    },
    nights: { type: 'integer', title: 'Nights', minimum: 1, maximum: 14 },
    budget: { type: 'number', title: 'Budget (EUR)', minimum: 0, description: 'For the whole stay' },
    email: { type: 'string', title: 'E-mail for the tickets', format: 'email' },
    departure: { type: 'string', title: 'Departure', format: 'date' },
    flexible: { type: 'boolean', title: 'Dates are flexible', default: false },
    note: { type: 'string', title: 'Note for the agent', maxLength: 80 },
    interests: {
      type: 'array',
      title: 'Interests',
      items: {
        anyOf: [
          { const: 'food', title: 'Food' },
          { const: 'museums', title: 'Museums' },
          { const: 'beaches', title: 'Beaches' },
        ],
      },
    },
  },
  required: ['cabin', 'nights', 'email'],
};

const tools = [
  {
    name: 'plan_trip',
    description: 'Plans a trip; asks the person how they want to travel',
    inputSchema: { city: z.string() },
    run: async ({ city }, call) => {
      const answer = inputResponse(call.inputResponses, 'trip');
      if (answer.kind === 'missing') {
        recordCall('plan_trip', { city, asked: true });
        return inputRequired({
          inputRequests: { trip: inputRequired.elicit({ message: `How do you want to travel to ${city}?`, requestedSchema: TRIP_SCHEMA }) },
          requestState: `trip:${city}`,
        });
      }
      recordCall('plan_trip', { city, action: answer.action, content: answer.content });
      if (answer.action !== 'accept') return { content: [{ type: 'text', text: `no trip to ${city}: ${answer.action}` }] };
      return { content: [{ type: 'text', text: `trip to ${city}: ${JSON.stringify(answer.content)}` }] };
    },
  },
  {
    name: 'verify_email',
    description: 'Verifies an e-mail address; the person confirms it on a web page',
    inputSchema: { address: z.string() },
    run: async ({ address }, call) => {
      const answer = inputResponse(call.inputResponses, 'confirm');
      if (answer.kind === 'missing') {
        recordCall('verify_email', { address, asked: true });
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicitUrl({
              message: `Confirm that ${address} is yours on the verification page.`,
              url: `https://verify.example.com/confirm?address=${encodeURIComponent(address)}`,
            }),
          },
          requestState: `verify:${address}`,
        });
      }
      recordCall('verify_email', { address, action: answer.action });
      return { content: [{ type: 'text', text: answer.action === 'accept' ? `${address}: the person says it is verified` : `${address}: not verified (${answer.action})` }] };
    },
  },
];

require('@modelcontextprotocol/server/stdio').serveStdio(() => modernServer({ name: 'questions', version: '1.0.0' }, tools), { legacy: 'reject' });
