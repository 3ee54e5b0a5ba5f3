/**
 * What a turn offers Claude, as `run`, `chat` and `watch` print it on a terminal: one line (counts
 * per server, the dropped ones per reason, each unavailable server with why, empty parts left out),
 * handed to its own writer (stderr) by the follower, after any open line of text; `--events` prints
 * the event itself.
 */
import type { TurnStreamEvent, TurnTools } from '../../src/core/stream-events';
import { StreamPrinter, toolsLine } from '../../src/cli/stream-printer';
import { TurnFollower } from '../../src/cli/turn-follower';

const tools = (t: Partial<TurnTools>): TurnTools => ({ offered: [], deferred: [], dropped: [], unavailable: [], ...t });
const offered = (server: string, n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `${server}__t${i}`, server, tool: `t${i}` }));

describe('toolsLine', () => {
  it('counts the offered tools per server, the dropped ones per reason, and names each unavailable server', () => {
    expect(
      toolsLine(
        tools({
          offered: [...offered('everything', 11), ...offered('crm', 1)],
          dropped: [
            { name: 'a', reason: 'over maxToolsPerRequest (15)' },
            { name: 'b', reason: 'over maxToolsPerRequest (15)' },
            { name: 'c', reason: 'over maxToolsPerRequest (15)' },
          ],
          unavailable: [{ server: 'files', reason: 'connect failed: ECONNREFUSED' }],
        }),
      ),
    ).toBe(
      'tools: 12 offered (everything 11, crm 1) · 3 dropped (over maxToolsPerRequest (15): 3) · unavailable: files (connect failed: ECONNREFUSED)',
    );
  });

  it('leaves out what is empty; names Claude\'s own tools; counts the deferred ones', () => {
    expect(toolsLine(tools({ offered: offered('everything', 13) }))).toBe('tools: 13 offered (everything 13)');
    expect(
      toolsLine(
        tools({
          offered: [...offered('crm', 2), { name: 'web_search', providerExecuted: true }],
          deferred: ['crm__t1'],
          dropped: [
            { name: 'x', reason: 'in tools.deny' },
            { name: 'y', reason: 'not in tools.allow' },
            { name: 'z', reason: 'in tools.deny' },
          ],
        }),
      ),
    ).toBe('tools: 3 offered (crm 2, web_search) · 1 deferred · 3 dropped (in tools.deny: 2, not in tools.allow: 1)');
    expect(toolsLine(tools({ unavailable: [{ server: 'crm', reason: 'circuit open, next probe in 24 s' }] }))).toBe(
      'tools: none offered · unavailable: crm (circuit open, next probe in 24 s)',
    );
  });

  it('names five unavailable servers and counts the rest; a long reason is cut, on one line', () => {
    const unavailable = Array.from({ length: 8 }, (_, i) => ({ server: `s${i}`, reason: 'not configured on the worker' }));
    expect(toolsLine(tools({ unavailable }))).toBe(
      `tools: none offered · unavailable: ${[0, 1, 2, 3, 4].map((i) => `s${i} (not configured on the worker)`).join(', ')} +3 more`,
    );
    const line = toolsLine(tools({ unavailable: [{ server: 'files', reason: `connect failed:\n${'x'.repeat(200)}` }] }));
    expect(line).not.toContain('\n');
    expect(line.length).toBeLessThan(110);
    expect(line).toMatch(/^tools: none offered · unavailable: files \(connect failed: x+…\)$/);
  });
});

describe('TurnFollower and the tools event', () => {
  const event = {
    type: 'data-tools',
    offset: 1,
    turnId: 't',
    ...tools({ offered: offered('everything', 2) }),
  } as TurnStreamEvent;
  const approvals = {} as ConstructorParameters<typeof TurnFollower>[0]['approvals'];

  it('hands the line to its writer after the open line of text; the printer prints nothing of it', () => {
    const out: string[] = [];
    const lines: string[] = [];
    const printer = new StreamPrinter({ write: (t) => void out.push(t) });
    const follower = new TurnFollower({ printer, approvals, warn: () => undefined, tools: (l) => void lines.push(l) });
    follower.onEvent({ type: 'text-delta', id: 'step-1', delta: 'Half a line', step: 1, attempt: 1, offset: 0, turnId: 't' });
    follower.onEvent(event);
    expect(lines).toEqual(['tools: 2 offered (everything 2)']);
    expect(out.join('')).toBe('Half a line\n');
  });

  it('prints nothing without a writer (not a terminal); with --events, the event as a JSON line', () => {
    const out: string[] = [];
    const printer = new StreamPrinter({ write: (t) => void out.push(t) });
    new TurnFollower({ printer, approvals, warn: () => undefined }).onEvent(event);
    expect(out).toEqual([]);

    const written: string[] = [];
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const lines: string[] = [];
      new TurnFollower({ events: true, approvals, warn: () => undefined, tools: (l) => void lines.push(l) }).onEvent(event);
      expect(lines).toEqual([]);
    } finally {
      write.mockRestore();
    }
    expect(written.map((l) => JSON.parse(l) as unknown)).toEqual([event]);
  });
});

describe('StreamPrinter and a server\'s questions', () => {
  it('prints what the server asks and how to answer it, then who answered', () => {
    const out: string[] = [];
    const printer = new StreamPrinter({ write: (t) => void out.push(t) });
    const base = { turnId: 'turn-1', toolCallId: 'toolu_1', round: 1, toolName: 'modern__book_table', server: 'modern', tool: 'book_table' };
    const requests = [
      {
        key: 'details',
        mode: 'form' as const,
        message: 'How many guests?',
        requestedSchema: { type: 'object', properties: { guests: { type: 'integer', minimum: 1 } }, required: ['guests'] },
      },
    ];
    printer.print({ type: 'data-input', offset: 3, ...base, state: 'waiting', requests, timeoutMs: 600_000 });
    printer.print({ type: 'data-input', offset: 4, ...base, state: 'answered', requests, by: 'alice', answer: { guests: 2 } });
    expect(out.join('')).toBe(
      [
        '? modern__book_table asks the person (declined after 600 s):',
        '  kind: input',
        '    How many guests?',
        '      guests  integer  required  >= 1',
        `  answer:  mcp-turns respond turn-1 toolu_1 --data '{"guests": …}'`,
        '  decline: mcp-turns respond turn-1 toolu_1 --decline',
        '▶ modern__book_table answered by alice',
        '',
      ].join('\n'),
    );
  });
});
