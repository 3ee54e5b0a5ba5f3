/**
 * `mcp-turns respond` and the input waits of `mcp-turns approvals`, their pure parts: which flags
 * ask for what (one of --data, --done, --decline; --data a JSON object), refused with one line and
 * exit code 2 before anything is asked of Temporal; the line per decided call; a waiting call's
 * questions under its row (message, fields, URL) with the commands that answer it.
 */
import type { PendingApproval } from '../../src/client/approvals';
import { CliError } from '../../src/cli/cli-error';
import { approvalLine } from '../../src/cli/approval-lines';
import { approvalsTable } from '../../src/cli/commands/approvals';
import { decidedLine as respondedLine } from '../../src/cli/approval-lines';
import { respondCommand, responseOf } from '../../src/cli/commands/respond';
import { dataTemplate, formFields, inputWaitLines } from '../../src/cli/input-request-lines';
import type { ApprovalRecord } from '../../src/core/approvals';
import type { InputRequest } from '../../src/core/input-requests';
import { flagsOf, parse } from '../support/cli-program';

const booking: InputRequest = {
  key: 'details',
  mode: 'form',
  message: 'How many guests, and when, at Chez Anna?',
  requestedSchema: {
    type: 'object',
    properties: { guests: { type: 'integer', minimum: 1, maximum: 20 }, time: { type: 'string', description: 'HH:MM' } },
    required: ['guests', 'time'],
  },
};
const signIn: InputRequest = { key: 'login', mode: 'url', message: 'Sign in to the calendar', url: 'https://calendar.example/auth?state=1' };

const waitingFor = (requests: InputRequest[], extra: Partial<PendingApproval> = {}): PendingApproval => ({
  kind: 'input',
  round: 1,
  requests,
  turnId: 'turn-b',
  callId: 'toolu_book',
  name: 'modern__book_table',
  server: 'modern',
  tool: 'book_table',
  input: { restaurant: 'Chez Anna' },
  step: 1,
  text: '',
  requestedAt: '2026-11-23T11:59:00Z',
  timeoutMs: 600_000,
  ...extra,
});

describe('respond: what the flags ask for', () => {
  it('reads --data as the answer, --done and --decline as they say', async () => {
    expect(responseOf(await flagsOf(respondCommand(), 't', 'c', '--data', '{"guests": 4, "time": "19:30"}'))).toEqual({ answer: { guests: 4, time: '19:30' } });
    expect(responseOf(await flagsOf(respondCommand(), 't', 'c', '--done'))).toEqual({ done: true });
    expect(responseOf(await flagsOf(respondCommand(), 't', 'c', '--decline', '--reason', 'not tonight'))).toEqual({ decline: true });
  });

  it('refuses no response, two of them, JSON that does not parse and JSON that is no object, each in one line, exit code 2', () => {
    const refusal = (opts: Parameters<typeof responseOf>[0]): [string, number] => {
      try {
        responseOf(opts);
      } catch (err) {
        if (err instanceof CliError) return [err.message, err.exitCode];
        throw err;
      }
      throw new Error('not refused');
    };
    expect(refusal({})).toEqual(["respond needs --data '<json>' (the answer to a form), --done (a URL visited) or --decline", 2]);
    expect(refusal({ data: '{}', decline: true })).toEqual(['respond takes one of --data, --decline, not both', 2]);
    expect(refusal({ data: '{}', decline: true, done: true })).toEqual(['respond takes one of --data, --decline, --done, not all of them', 2]);
    expect(refusal({ data: '{guests: 4}' })[0]).toMatch(/^--data "\{guests: 4\}": not JSON \(.*property name.*\)$/);
    expect(refusal({ data: '[4, "19:30"]' })).toEqual(['--data "[4, \\"19:30\\"]": the answer is a JSON object of the form\'s fields', 2]);
  });

  it('refuses them on the real command line before connecting to anything', async () => {
    const err = await parse('respond', 'turn-x', 'toolu_x', '--data', 'nope', '--address', '127.0.0.1:1');
    expect(err).toBeInstanceOf(CliError);
    expect((err as CliError).message).toMatch(/^--data "nope": not JSON/);
    expect((err as CliError).exitCode).toBe(2);
  });

  it('prints one line per decided call: answered, done, declined', () => {
    const record: ApprovalRecord = { ...waitingFor([booking]), input: { restaurant: 'Chez Anna' }, outcome: 'approved', answer: { guests: 4, time: '19:30' }, decidedBy: 'alice@test' };
    expect(respondedLine('turn-b', record)).toBe('answered modern__book_table (call toolu_book) of turn turn-b as alice@test');
    expect(respondedLine('turn-b', { ...record, answer: undefined })).toBe('done modern__book_table (call toolu_book) of turn turn-b as alice@test');
    expect(respondedLine('turn-b', { ...record, outcome: 'denied', answer: undefined })).toBe('declined modern__book_table (call toolu_book) of turn turn-b as alice@test');
    // A call that waited for approval, declined with respond: denied.
    expect(respondedLine('turn-b', { ...record, kind: undefined, outcome: 'denied', answer: undefined })).toBe('denied modern__book_table (call toolu_book) of turn turn-b as alice@test');
  });
});

describe('approvals: a call waiting for input', () => {
  it("reads a form's fields: name, type, required, bounds and description", () => {
    expect(formFields(booking.mode === 'form' ? booking.requestedSchema : {})).toEqual([
      { name: 'guests', type: 'integer', required: true, note: '1..20' },
      { name: 'time', type: 'string', required: true, note: 'HH:MM' },
    ]);
    expect(
      formFields({
        type: 'object',
        properties: {
          email: { type: 'string', format: 'email', title: 'E-mail' },
          seating: { type: 'string', oneOf: [{ const: 'inside', title: 'Inside' }, { const: 'terrace', title: 'Terrace' }] },
          diet: { type: 'array', items: { enum: ['vegan', 'halal'] } },
          notes: { type: 'string', maxLength: 200, default: '' },
        },
        required: ['email'],
      }),
    ).toEqual([
      { name: 'email', type: 'string (email)', required: true, note: 'E-mail' },
      { name: 'seating', type: 'one of "inside", "terrace"', required: false },
      { name: 'diet', type: 'array of "vegan", "halal"', required: false },
      { name: 'notes', type: 'string', required: false, note: 'length <= 200 · default ""' },
    ]);
  });

  it('shows what --data takes: one form its fields, several each by its key', () => {
    expect(dataTemplate([booking])).toBe('{"guests": …, "time": …}');
    expect(dataTemplate([booking, { ...booking, key: 'contact', requestedSchema: { type: 'object', properties: { email: { type: 'string' } } } }])).toBe(
      '{"details": {"guests": …, "time": …}, "contact": {"email": …}}',
    );
  });

  it("lists the wait under its row: kind input, the server's message, the fields, and how to answer or decline", () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    const table = approvalsTable(
      [
        { turnId: 'turn-a', callId: 'toolu_1', name: 'files__write_file', server: 'files', tool: 'write_file', input: { path: '/tmp/a' }, step: 1, text: '', requestedAt: '2026-11-23T11:59:50Z' },
        waitingFor([booking]),
      ],
      now,
      ['--address', '127.0.0.1:7233'],
    ).split('\n');
    expect(table).toEqual([
      'TURN    CALL        TOOL                ARGUMENTS                   WAITING SINCE',
      'turn-a  toolu_1     files__write_file   {"path":"/tmp/a"}           2026-11-23T11:59:50Z (10s ago)',
      'turn-b  toolu_book  modern__book_table  {"restaurant":"Chez Anna"}  2026-11-23T11:59:00Z (60s ago, declined after 600s)',
      '  kind: input',
      '    How many guests, and when, at Chez Anna?',
      '      guests  integer  required  1..20',
      '      time    string   required  HH:MM',
      `  answer:  mcp-turns respond turn-b toolu_book --address 127.0.0.1:7233 --data '{"guests": …, "time": …}'`,
      '  decline: mcp-turns respond turn-b toolu_book --address 127.0.0.1:7233 --decline',
    ]);
  });

  it('lists a URL to visit, with done instead of an answer; several questions by their keys; a later round and shortened questions say so', () => {
    expect(inputWaitLines(waitingFor([signIn]))).toEqual([
      '  kind: input',
      '    Sign in to the calendar',
      '      visit: https://calendar.example/auth?state=1',
      '  done:    mcp-turns respond turn-b toolu_book --done',
      '  decline: mcp-turns respond turn-b toolu_book --decline',
    ]);
    const both = inputWaitLines(waitingFor([signIn, booking], { round: 2, requestsTruncated: true }));
    expect(both[0]).toBe('  kind: input (round 2) (questions shortened: too large for the listing)');
    expect(both.slice(1, 4)).toEqual(['    login: Sign in to the calendar', '      visit: https://calendar.example/auth?state=1', '    details: How many guests, and when, at Chez Anna?']);
    expect(both.at(-2)).toBe(`  answer:  mcp-turns respond turn-b toolu_book --data '{"guests": …, "time": …}'`);
  });
});

it("prints a call that waited for input in `show`: answered, done, declined, timed out, still waiting", () => {
  const base: ApprovalRecord = { ...waitingFor([booking]), input: { restaurant: 'Chez Anna' }, requestedAt: '2026-11-23T12:00:00.000Z', step: 2 };
  const at = '2026-11-23T12:00:07.253Z';
  expect(approvalLine({ ...base, outcome: 'approved', answer: { guests: 4 }, decidedBy: 'alice', decidedAt: at })).toBe(
    'step 2 · modern__book_table · input · answered by alice at 2026-11-23T12:00:07.253Z (waited 7.3 s)',
  );
  expect(approvalLine({ ...base, requests: [signIn], outcome: 'approved', decidedBy: 'alice', decidedAt: at })).toBe(
    'step 2 · modern__book_table · input · done by alice at 2026-11-23T12:00:07.253Z (waited 7.3 s)',
  );
  expect(approvalLine({ ...base, round: 2, outcome: 'denied', decidedBy: 'bob', decidedAt: at })).toBe(
    'step 2 · modern__book_table · input (round 2) · declined by bob at 2026-11-23T12:00:07.253Z (waited 7.3 s)',
  );
  expect(approvalLine({ ...base, outcome: 'timed_out', decidedAt: '2026-11-23T12:10:00.000Z' })).toBe(
    'step 2 · modern__book_table · input · timed out after 10 min at 2026-11-23T12:10:00.000Z, no answer: declined',
  );
  expect(approvalLine(base, Date.parse('2026-11-23T12:00:12Z'))).toBe(
    'step 2 · modern__book_table · input · waiting for input since 2026-11-23T12:00:00.000Z (12 s so far, declined after 10 min)',
  );
});
