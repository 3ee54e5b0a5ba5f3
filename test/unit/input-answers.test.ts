/**
 * A person's answer to a server's questions, checked before it is sent (src/client/input-answers.ts):
 * one line naming each wrong field, one form or several, a URL question's "done"; what the turn's
 * memo keeps of the questions; and which decisions the turn refuses for a call waiting for input.
 */
import { answerProblem } from '../../src/client/input-answers';
import { MEMO_REQUESTS_BYTES, decisionProblem, pendingApprovalMemo, type ApprovalRecord } from '../../src/core/approvals';
import type { InputRequest } from '../../src/core/input-requests';

/** The modern fixture's book_table form (test/support/modern-mcp-server.js). */
const booking: InputRequest = {
  key: 'details',
  mode: 'form',
  message: 'How many guests, and when, at Chez Anna?',
  requestedSchema: {
    type: 'object',
    properties: { guests: { type: 'integer', minimum: 1, maximum: 20 }, time: { type: 'string' } },
    required: ['guests', 'time'],
  },
};
const contact: InputRequest = {
  key: 'contact',
  mode: 'form',
  message: 'How can the restaurant reach you?',
  requestedSchema: {
    type: 'object',
    properties: { email: { type: 'string', format: 'email' }, seating: { type: 'string', enum: ['inside', 'terrace'] } },
    required: ['email'],
    additionalProperties: false,
  },
};
const signIn: InputRequest = { key: 'login', mode: 'url', message: 'Sign in to the calendar', url: 'https://calendar.example/auth?state=1' };

describe('one form: the answer is its content', () => {
  it('accepts an answer that matches the schema', () => {
    expect(answerProblem([booking], { guests: 4, time: '19:30' })).toBeUndefined();
  });

  it('names the field and what is wrong, in one line', () => {
    expect(answerProblem([booking], { guests: 0, time: '19:30' })).toBe('input.guests: must be >= 1');
    expect(answerProblem([booking], { guests: 2.5, time: '19:30' })).toBe('input.guests: must be integer');
    expect(answerProblem([booking], { guests: 4 })).toBe('input.time: is required');
    expect(answerProblem([booking], { guests: '4', time: 7 })).toBe('input.guests: must be integer; input.time: must be string');
    expect(answerProblem([booking], {})).toBe('input.guests: is required; input.time: is required');
  });

  it('asks for the values when there are none, and for an object when the answer is not one', () => {
    expect(answerProblem([booking], undefined)).toBe('input: this call asks for values: give them, or decline');
    expect(answerProblem([booking], [4, '19:30'])).toBe('input: must be an object');
  });

  it('checks formats and choices, and names a field the form does not have', () => {
    expect(answerProblem([contact], { email: 'not an address', seating: 'roof', extra: 1 })).toBe(
      'input.extra: is not a field of this form; input.email: must match format "email"; input.seating: must be one of "inside", "terrace"',
    );
  });

  it('counts the problems past the third instead of naming them all', () => {
    const wide: InputRequest = {
      ...booking,
      requestedSchema: { type: 'object', properties: {}, required: ['a', 'b', 'c', 'd', 'e'] },
    };
    expect(answerProblem([wide], {})).toBe('input.a: is required; input.b: is required; input.c: is required; and 2 more');
  });

  it('quotes a field name that is no identifier', () => {
    const odd: InputRequest = { ...booking, requestedSchema: { type: 'object', properties: { 'party size': { type: 'integer' } } } };
    expect(answerProblem([odd], { 'party size': 'six' })).toBe('input["party size"]: must be integer');
  });

  it('accepts any answer to a schema it cannot compile (the server checks it)', () => {
    const broken: InputRequest = { ...booking, requestedSchema: { type: 'object', properties: { n: { type: 'no-such-type' } } } };
    expect(answerProblem([broken], { n: 1 })).toBeUndefined();
  });

  it('reads a draft-07 schema as draft-07', () => {
    const draft7: InputRequest = {
      ...booking,
      requestedSchema: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { n: { type: 'integer', exclusiveMinimum: 0 } } },
    };
    expect(answerProblem([draft7], { n: 0 })).toBe('input.n: must be > 0');
    expect(answerProblem([draft7], { n: 1 })).toBeUndefined();
  });
});

describe('several forms: the answer gives each by its key', () => {
  it('checks each form under its key', () => {
    expect(answerProblem([booking, contact], { details: { guests: 2, time: '20:00' }, contact: { email: 'ana@example.com' } })).toBeUndefined();
    expect(answerProblem([booking, contact], { details: { guests: 30, time: '20:00' }, contact: { email: 'ana@example.com' } })).toBe(
      'input.details.guests: must be <= 20',
    );
  });

  it('names a missing form by its fields, a form that is not an object, and a key that names no question', () => {
    expect(answerProblem([booking, contact], { details: { guests: 2, time: '20:00' } })).toBe('input.contact.email: is required');
    expect(answerProblem([booking, contact], { details: 'tonight', contact: { email: 'ana@example.com' } })).toBe('input.details: must be an object');
    expect(answerProblem([booking, contact], { details: { guests: 2, time: '20:00' }, contact: { email: 'ana@example.com' }, other: {} })).toBe(
      'input.other: is not one of the questions (details, contact)',
    );
  });
});

describe('a URL question: done takes no values', () => {
  it('accepts done, and refuses values', () => {
    expect(answerProblem([signIn], undefined)).toBeUndefined();
    expect(answerProblem([signIn], { ok: true })).toBe('input: this call asks to visit a URL, not for values: answer without input once done, or decline');
  });

  it('checks the form of a round that asks both', () => {
    expect(answerProblem([signIn, booking], { guests: 3, time: '18:00' })).toBeUndefined();
    expect(answerProblem([signIn, booking], undefined)).toBe('input: this call asks for values: give them, or decline');
  });
});

describe('the decisions the turn refuses for a call waiting for input', () => {
  const waiting = (callId: string, kind?: 'input'): ApprovalRecord => ({
    callId,
    name: kind ? 'modern__book_table' : 'files__write_file',
    server: kind ? 'modern' : 'files',
    tool: kind ? 'book_table' : 'write_file',
    input: {},
    step: 1,
    text: '',
    requestedAt: 't',
    ...(kind ? { kind, requests: [booking], round: 1 } : {}),
  });

  it('an answer to a call waiting for approval, an approval without the values a form asks for', () => {
    expect(decisionProblem([waiting('a')], { approve: true, callId: 'a', input: { x: 1 } })).toBe(
      'tool call a (files__write_file) waits for approval, not for input: approve or deny it',
    );
    expect(decisionProblem([waiting('b', 'input')], { approve: true, callId: 'b' })).toBe('tool call b (modern__book_table) asks for input: give it, or decline');
    expect(decisionProblem([waiting('b', 'input')], { approve: true, callId: 'b', input: { guests: 1, time: 'now' } })).toBeUndefined();
    expect(decisionProblem([waiting('b', 'input')], { approve: false, callId: 'b' })).toBeUndefined();
  });

  it('an answer checked against an earlier round of questions than the one asked now', () => {
    const answer = { approve: true, callId: 'b', input: { guests: 1, time: 'now' } };
    expect(decisionProblem([waiting('b', 'input')], { ...answer, round: 1 })).toBeUndefined();
    expect(decisionProblem([{ ...waiting('b', 'input'), round: 2 }], { ...answer, round: 1 })).toBe(
      'tool call b (modern__book_table) now asks round 2 of questions; the answer was for round 1: read the new questions and answer again',
    );
  });

  it('approving every waiting call while one waits for input: that one is answered by its id', () => {
    expect(decisionProblem([waiting('a'), waiting('b', 'input')], { approve: true })).toBe(
      'tool call b (modern__book_table) waits for input, not for approval: answer or decline it by its call id first',
    );
    // Denying every waiting call declines the questions too; approving every call is fine once none asks.
    expect(decisionProblem([waiting('a'), waiting('b', 'input')], { approve: false })).toBeUndefined();
    expect(decisionProblem([waiting('a')], { approve: true })).toBeUndefined();
  });
});

describe("the turn's memo", () => {
  const record: ApprovalRecord = {
    kind: 'input',
    round: 1,
    requests: [booking, signIn],
    callId: 'toolu_book',
    name: 'modern__book_table',
    server: 'modern',
    tool: 'book_table',
    input: { restaurant: 'Chez Anna' },
    step: 1,
    text: 'Booking.',
    requestedAt: 't',
  };

  it('keeps the questions whole, as the front doors render them', () => {
    expect(pendingApprovalMemo(record)).toEqual(record);
  });

  it("keeps each form's fields of questions over the limit, and says they were shortened", () => {
    const countries = Array.from({ length: 2000 }, (_, i) => `country-${i}`);
    const large: InputRequest = {
      key: 'where',
      mode: 'form',
      message: `Where do you live? ${'Please pick one. '.repeat(100)}`,
      requestedSchema: {
        type: 'object',
        properties: { country: { type: 'string', title: 'Country', enum: countries, description: 'where' }, zip: { type: 'string' } },
        required: ['country'],
      },
    };
    expect(JSON.stringify(large).length).toBeGreaterThan(MEMO_REQUESTS_BYTES);
    const memo = pendingApprovalMemo({ ...record, requests: [large, signIn] });
    expect(memo.requestsTruncated).toBe(true);
    expect(memo.requests).toEqual([
      {
        key: 'where',
        mode: 'form',
        message: expect.stringMatching(/^Where do you live\? Please pick one\..*…$/),
        requestedSchema: { type: 'object', properties: { country: { type: 'string', title: 'Country' }, zip: { type: 'string' } }, required: ['country'] },
      },
      signIn,
    ]);
    expect(memo.requests![0]!.message).toHaveLength(300);
    expect(memo.input).toEqual({ restaurant: 'Chez Anna' });
  });

  it('keeps only that there is a form when even its fields are over the limit', () => {
    const properties = Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`field_${i}`, { type: 'string' }]));
    const memo = pendingApprovalMemo({ ...record, requests: [{ ...booking, requestedSchema: { type: 'object', properties } }] });
    expect(memo).toMatchObject({ requestsTruncated: true, requests: [{ key: 'details', mode: 'form', requestedSchema: { type: 'object' } }] });
    expect(JSON.stringify(memo).length).toBeLessThan(MEMO_REQUESTS_BYTES);
  });
});
