/**
 * The chat page answering a server's questions (MCP 2026-07-28 `input_required`,
 * src/core/input-requests.ts), driven by Debian's Chromium against the real server: the HTTP app in
 * process, the test dev server, a worker with two 2026-07-28 servers (test/support/modern-mcp-server.js,
 * whose `book_table` asks for guests and a time, and ./questions-mcp-server.js, whose `plan_trip`
 * asks a form of every field kind and `verify_email` asks to visit a URL) and the stub Claude.
 *
 * A waiting round is a `data-input` event of the turn's stream: the page builds a form from the
 * requested schema, sends the answer to `POST /v1/approvals/{turn}/{call}` (`{input}`; Decline
 * `{approved:false}`; a URL's Done `{approved:true}`), shows a refusal's line next to the form, and
 * once the round has ended shows who answered in its place, live and read again from history.
 * Screenshots go to test-artifacts/chat-page-input-*.png.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page, type Response } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { resolveServeSettings } from '../../src/config/serve-settings';
import { startConversation } from '../../src/client/conversation-client';
import { subscribeTurn } from '../../src/client/subscribe';
import { tokenCaller } from '../../src/serve/caller';
import type { TurnStreamEvent } from '../../src/core/stream-events';
import type { ChatTurnResult } from '../../src/core/turn-result';
import { ensureChromium, CHROMIUM_ARGS } from '../support/chromium';
import { startServeApp } from '../support/serve-app';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { modernStdio } from '../support/mcp-servers';

jest.setTimeout(180_000);

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts');
const TOKEN = 'chat-input-token-91c2e7-never-shown';
const ANSWERER = 'page-answerer';
/** Whose the conversations are: the page's token holder. */
const OWNER = tokenCaller(ANSWERER, false).owner;
const UI_URL = process.env.MCP_TURNS_TEST_UI_URL!;
const RUN = Date.now().toString(36);
const QUESTIONS = path.join(__dirname, 'questions-mcp-server.js');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'chat-page-input-'));
const counts = { modern: path.join(dir, 'modern.jsonl'), questions: path.join(dir, 'questions.jsonl') };
interface CallLine {
  tool: string;
  args: Record<string, unknown>;
}
const callsOf = (file: string): CallLine[] =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as CallLine) : [];

let h: TurnHarness;
let app: FastifyInstance;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];
const conversations: string[] = [];

beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const executablePath = ensureChromium();
  const [harness, b] = await Promise.all([
    startTurnHarness({
      scenarios: {
        // book_table asks how many guests and when, then books with the answer.
        book: {
          perTurn: true,
          streamDelayMs: 10,
          steps: [
            { content: [{ type: 'text', text: 'I will book a table at Chez Nous.' }, { type: 'tool_use', name: 'modern__book_table', input: { restaurant: 'Chez Nous' } }] },
            { content: [{ type: 'text', text: 'The booking tool has answered.' }] },
          ],
          formatter: { conversation: [{ type: 'text', content: 'Booking: {{toolResults}}' }] },
        },
        // Two calls waiting at once: a form of every field kind, and a URL to visit.
        trip: {
          perTurn: true,
          streamDelayMs: 10,
          steps: [
            {
              content: [
                { type: 'text', text: 'I will plan the trip and verify the address.' },
                { type: 'tool_use', name: 'questions__plan_trip', input: { city: 'Lisbon' } },
                { type: 'tool_use', name: 'questions__verify_email', input: { address: 'ada@example.com' } },
              ],
            },
            { content: [{ type: 'text', text: 'Both tools have answered.' }] },
          ],
          formatter: { conversation: [{ type: 'text', content: 'Trip: {{toolResults}}' }] },
        },
      },
      servers: {
        modern: modernStdio(counts.modern),
        questions: { type: 'stdio', command: process.execPath, args: [QUESTIONS], env: { MCP_FIXTURE_ERA: 'modern', COUNT_FILE: counts.questions } },
      },
      claude: { model: 'book' },
    }),
    chromium.launch({ executablePath, args: CHROMIUM_ARGS }),
  ]);
  h = harness;
  browser = b;
  const settings = resolveServeSettings({ tokens: [{ name: ANSWERER, token: TOKEN }] }, { host: '127.0.0.1', port: 0 }, {});
  ({ app, base } = await startServeApp(h, settings, UI_URL));
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await app?.close();
  for (const id of conversations) {
    const handle = h.client.workflow.getHandle(id);
    if ((await handle.describe().catch(() => undefined))?.status.name === 'RUNNING') await handle.terminate('chat-page input test done').catch(() => {});
  }
  await h?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const shot = async (page: Page, name: string): Promise<string> => {
  const file = path.join(ARTIFACTS, `chat-page-input-${name}.png`);
  await page.screenshot({ path: file });
  expect(fs.statSync(file).size).toBeGreaterThan(10_000);
  return file;
};

interface Opened {
  page: Page;
  context: BrowserContext;
  errors: string[];
  /** The bodies the page posted to the approvals route, in order. */
  posted: unknown[];
}

/** A fresh browser profile on conversation `id`, signed in with the page's token. */
async function openPage(id: string): Promise<Opened> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  contexts.push(context);
  const page = await context.newPage();
  const errors: string[] = [];
  const posted: unknown[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  page.on('request', (r) => {
    if (r.method() === 'POST' && /\/v1\/approvals\//.test(r.url())) posted.push(r.postDataJSON());
  });
  await page.goto(`${base}/#c=${encodeURIComponent(id)}`);
  await page.locator('#signin').waitFor({ state: 'visible', timeout: 30_000 });
  await page.locator('#token-input').fill(TOKEN);
  await page.locator('#signin-submit').click();
  await page.locator('#signin').waitFor({ state: 'hidden', timeout: 10_000 });
  await page.locator('#connection[data-state="ok"]').waitFor({ timeout: 30_000 });
  await page.locator('#conversation-id', { hasText: id }).waitFor({ timeout: 30_000 });
  return { page, context, errors, posted };
}

async function send(page: Page, text: string): Promise<void> {
  const composer = page.locator('#composer');
  await composer.fill(text);
  await page.locator('#send:not([disabled])').waitFor({ timeout: 10_000 });
  await composer.press('Enter');
  await page.locator('section.turn .user-bubble', { hasText: text }).waitFor({ timeout: 10_000 });
}

/** A conversation of the page's token holder, its turns on `model`. */
async function conversation(name: string, model: string): Promise<string> {
  const id = `page-input-${name}-${RUN}`;
  conversations.push(id);
  await startConversation(h.client, id, { taskQueue: h.taskQueue, owner: OWNER, options: { model } });
  return id;
}

/** The page's answer to the approvals route: the next response to a POST there. */
const approvalsResponse = (page: Page): Promise<Response> =>
  page.waitForResponse((r) => r.request().method() === 'POST' && /\/v1\/approvals\//.test(r.url()), { timeout: 30_000 });

/** Every event of a finished turn, read from its history. */
async function replayed(turnId: string): Promise<TurnStreamEvent[]> {
  const events: TurnStreamEvent[] = [];
  for await (const e of subscribeTurn(h.client, turnId, { fromOffset: 0 })) {
    events.push(e);
    if (e.type === 'finish') break;
  }
  return events;
}

const squash = (s: string | null): string => (s ?? '').replace(/\s+/g, ' ').trim();

it("asks the server's questions as a form from its schema; a refused answer says why next to it; the answer sent ends the wait, live and replayed", async () => {
  const convId = await conversation('book', 'book');
  const { page, errors, posted } = await openPage(convId);
  await send(page, 'Book a table at Chez Nous');

  // The call waits for input: its card says so, the form is built from the schema, the server's message above it.
  const card = page.locator('.tool-card[data-state="input"]');
  await card.waitFor({ timeout: 60_000 });
  await expect(card.locator('.tool-state').textContent()).resolves.toBe('Waiting for input');
  await expect(page.locator('.working-label').textContent()).resolves.toBe('Paused until someone answers modern · book_table');
  const form = card.locator('.tool-input[data-round="1"] form.input-form');
  await expect(form.locator('.input-message').textContent()).resolves.toBe('How many guests, and when, at Chez Nous?');
  const guests = form.locator('.input-field[data-name="guests"] input');
  const time = form.locator('.input-field[data-name="time"] input');
  await expect(guests.getAttribute('type')).resolves.toBe('number');
  await expect(guests.getAttribute('min')).resolves.toBe('1');
  await expect(guests.getAttribute('max')).resolves.toBe('20');
  await expect(guests.getAttribute('step')).resolves.toBe('1');
  await expect(time.getAttribute('type')).resolves.toBe('text');
  // Both are required: marked, and told to assistive technology.
  await expect(form.locator('.input-field[data-name="guests"] .input-required').count()).resolves.toBe(1);
  await expect(form.locator('.input-field[data-name="time"] .input-required').count()).resolves.toBe(1);
  await expect(guests.getAttribute('aria-required')).resolves.toBe('true');
  await expect(form.locator('button.approve').textContent()).resolves.toBe('Submit');
  await expect(form.locator('button.deny').textContent()).resolves.toBe('Decline');
  await card.scrollIntoViewIfNeeded();
  await shot(page, 'form');

  // Too many guests: the server refuses the answer with one line, shown next to the form, which stays to be corrected.
  await guests.fill('25');
  await time.fill('19:30');
  const refusedAt = approvalsResponse(page);
  await form.locator('button.approve').click();
  const refused = await refusedAt;
  expect(refused.status()).toBe(400);
  const said = ((await refused.json()) as { error: string }).error;
  expect(said).toContain('guests');
  const message = card.locator('.tool-input[data-round="1"] .approval-message.error');
  await message.waitFor({ timeout: 10_000 });
  await expect(message.textContent()).resolves.toBe(said);
  await expect(form.locator('button.approve').isEnabled()).resolves.toBe(true);
  await expect(card.getAttribute('data-state')).resolves.toBe('input');
  await shot(page, 'refused');

  // A good answer: sent with the number as a number; the form gives way to who answered, with what.
  await guests.fill('4');
  const answeredAt = approvalsResponse(page);
  await form.locator('button.approve').click();
  expect((await answeredAt).status()).toBe(200);
  expect(posted).toEqual([{ input: { guests: 25, time: '19:30' } }, { input: { guests: 4, time: '19:30' } }]);
  const round = page.locator('.tool-card .tool-input[data-round="1"]');
  await round.locator('.input-end').waitFor({ timeout: 30_000 });
  await expect(round.locator('form').count()).resolves.toBe(0);
  await expect(round.locator('.decision-text').textContent()).resolves.toBe(`answered by ${ANSWERER}`);
  await expect(round.locator('.input-answer').textContent()).resolves.toBe('guests: 4 · time: 19:30');

  // The call is sent again with the answer and books; the turn ends.
  await page.locator('section.turn[data-status="completed"]').waitFor({ timeout: 60_000 });
  const done = page.locator('.tool-card').first();
  await expect(done.getAttribute('data-state')).resolves.toBe('ok');
  await expect(done.locator('.tool-result code').last().textContent()).resolves.toBe('booked Chez Nous for 4 at 19:30');
  expect(squash(await page.locator('section.turn .answer').textContent())).toBe('Booking: booked Chez Nous for 4 at 19:30');
  await done.scrollIntoViewIfNeeded();
  await shot(page, 'answered');

  // The server got the answer as typed values with its own state, on the call sent again; the first call asked.
  const calls = callsOf(counts.modern).filter((c) => c.tool === 'book_table');
  expect(calls.map((c) => c.args)).toEqual([
    { restaurant: 'Chez Nous', asked: true, requestState: expect.stringMatching(/^booking:Chez Nous:/) },
    { restaurant: 'Chez Nous', action: 'accept', content: { guests: 4, time: '19:30' }, requestState: expect.stringMatching(/^booking:Chez Nous:/) },
  ]);
  const turnId = (await page.locator('section.turn').getAttribute('data-turn-id'))!;
  const result = (await h.client.workflow.getHandle(turnId).result()) as ChatTurnResult;
  expect(result.approvals).toEqual([expect.objectContaining({ kind: 'input', round: 1, outcome: 'approved', decidedBy: ANSWERER, answer: { guests: 4, time: '19:30' } })]);
  expect(JSON.stringify(result)).not.toContain(TOKEN);

  // Read again from the finished turn's history: the same wait and its end, and no approval.
  const events = await replayed(turnId);
  const inputs = events.filter((e) => e.type === 'data-input');
  expect(inputs).toEqual([
    expect.objectContaining({ toolCallId: result.toolCalls[0]!.id, round: 1, state: 'waiting', server: 'modern', tool: 'book_table', requests: [expect.objectContaining({ key: 'details', mode: 'form', message: 'How many guests, and when, at Chez Nous?' })] }),
    expect.objectContaining({ round: 1, state: 'answered', by: ANSWERER, answer: { guests: 4, time: '19:30' } }),
  ]);
  expect(events.filter((e) => e.type === 'data-approval')).toEqual([]);
  expect(events.filter((e) => e.type === 'tool-output-available')).toEqual([expect.objectContaining({ isError: false, output: 'booked Chez Nous for 4 at 19:30' })]);

  // A page opened afterwards shows the ended round as the live one did: who answered, no form.
  const later = await openPage(convId);
  const again = later.page.locator('.tool-card .tool-input[data-round="1"]');
  await again.locator('.input-end').waitFor({ timeout: 30_000 });
  await expect(again.locator('.decision-text').textContent()).resolves.toBe(`answered by ${ANSWERER}`);
  await expect(later.page.locator('.tool-card form').count()).resolves.toBe(0);
  await later.page.locator('.tool-card').first().scrollIntoViewIfNeeded();
  await shot(later.page, 'replayed');
  expect([...errors, ...later.errors]).toEqual([]);
});

it('builds every field kind of an elicitation schema and sends typed values; a URL question is a link to open, answered with Done', async () => {
  const convId = await conversation('trip', 'trip');
  const { page, context, errors, posted } = await openPage(convId);
  await send(page, 'Plan a trip to Lisbon and verify ada@example.com');

  const trip = page.locator('.tool-card', { hasText: 'plan_trip' });
  const verify = page.locator('.tool-card', { hasText: 'verify_email' });
  await trip.locator('.tool-input form').waitFor({ timeout: 60_000 });
  await verify.locator('.tool-input form').waitFor({ timeout: 60_000 });
  const form = trip.locator('form.input-form');
  const field = (name: string) => form.locator(`.input-field[data-name="${name}"]`);
  // A titled enum is a select of its titles; bounds, formats and a length limit are the controls' own.
  await expect(field('cabin').locator('select option').allTextContents()).resolves.toEqual(['Choose…', 'Economy', 'Business']);
  await expect(field('nights').locator('input').getAttribute('step')).resolves.toBe('1');
  await expect(field('budget').locator('input').getAttribute('step')).resolves.toBe('any');
  await expect(field('budget').locator('.input-hint').textContent()).resolves.toBe('For the whole stay');
  await expect(field('email').locator('input').getAttribute('type')).resolves.toBe('email');
  await expect(field('departure').locator('input').getAttribute('type')).resolves.toBe('date');
  await expect(field('flexible').locator('input').getAttribute('type')).resolves.toBe('checkbox');
  await expect(field('note').locator('input').getAttribute('maxlength')).resolves.toBe('80');
  await expect(field('interests').locator('.input-choice').allTextContents()).resolves.toEqual(['Food', 'Museums', 'Beaches']);
  await expect(form.locator('.input-required').count()).resolves.toBe(3);
  await expect(field('cabin').locator('label').textContent()).resolves.toBe('Cabin *');

  // The URL: a link that opens in a new tab, never followed by the page; Done and Decline.
  const link = verify.locator('a.input-url');
  await expect(link.getAttribute('href')).resolves.toBe('https://verify.example.com/confirm?address=ada%40example.com');
  await expect(link.getAttribute('target')).resolves.toBe('_blank');
  await expect(link.getAttribute('rel')).resolves.toBe('noopener noreferrer');
  await expect(verify.locator('.input-message').textContent()).resolves.toBe('Confirm that ada@example.com is yours on the verification page.');
  await expect(verify.locator('button.approve').textContent()).resolves.toBe('✓ Done');
  await expect(verify.locator('button.deny').textContent()).resolves.toBe('Decline');
  await trip.scrollIntoViewIfNeeded();
  await shot(page, 'trip-form');

  await field('cabin').locator('select').selectOption('business');
  await field('nights').locator('input').fill('3');
  await field('budget').locator('input').fill('1250.5');
  await field('email').locator('input').fill('ada@example.com');
  await field('departure').locator('input').fill('2027-05-01');
  await field('flexible').locator('input').check();
  await field('interests').getByLabel('Food').check();
  await field('interests').getByLabel('Museums').check();
  await verify.scrollIntoViewIfNeeded();
  await shot(page, 'trip-filled');
  const sent = approvalsResponse(page);
  await form.locator('button.approve').click();
  expect((await sent).status()).toBe(200);
  await trip.locator('.input-end').waitFor({ timeout: 30_000 });

  const doneAt = approvalsResponse(page);
  await verify.locator('button.approve').click();
  expect((await doneAt).status()).toBe(200);
  await verify.locator('.input-end').waitFor({ timeout: 30_000 });
  await expect(verify.locator('.decision-text').textContent()).resolves.toBe(`answered by ${ANSWERER}`);
  // Nothing was opened or followed: the link is the person's to open.
  expect(context.pages()).toHaveLength(1);
  expect(new URL(page.url()).origin).toBe(base);

  // Typed values: numbers as numbers, the box as a boolean, the empty note left out.
  const answer = { cabin: 'business', nights: 3, budget: 1250.5, email: 'ada@example.com', departure: '2027-05-01', flexible: true, interests: ['food', 'museums'] };
  expect(posted).toEqual([{ input: answer }, { approved: true }]);
  await page.locator('section.turn[data-status="completed"]').waitFor({ timeout: 60_000 });
  const lines = callsOf(counts.questions);
  expect(lines.find((c) => c.tool === 'plan_trip' && c.args.action === 'accept')?.args.content).toEqual(answer);
  expect(lines.find((c) => c.tool === 'verify_email' && c.args.action)?.args.action).toBe('accept');
  await expect(trip.locator('.tool-result code').last().textContent()).resolves.toBe(`trip to Lisbon: ${JSON.stringify(answer)}`);
  await expect(verify.locator('.tool-result code').last().textContent()).resolves.toBe('ada@example.com: the person says it is verified');
  await trip.scrollIntoViewIfNeeded();
  await shot(page, 'trip-answered');
  expect(errors).toEqual([]);
});

it('Decline ends the wait as declined by the signed-in token; the call is sent again with the decline', async () => {
  const convId = await conversation('decline', 'book');
  const { page, errors, posted } = await openPage(convId);
  await send(page, 'Book a table at Chez Nous, maybe');
  const card = page.locator('.tool-card[data-state="input"]');
  await card.locator('form.input-form').waitFor({ timeout: 60_000 });
  const declinedAt = approvalsResponse(page);
  await card.locator('button.deny').click();
  expect((await declinedAt).status()).toBe(200);
  expect(posted).toEqual([{ approved: false }]);
  const round = page.locator('.tool-card .tool-input[data-round="1"]');
  await round.locator('.input-end[data-decision="denied"]').waitFor({ timeout: 30_000 });
  await expect(round.locator('.decision-text').textContent()).resolves.toBe(`declined by ${ANSWERER}`);
  await page.locator('section.turn[data-status="completed"]').waitFor({ timeout: 60_000 });
  const done = page.locator('.tool-card').first();
  await expect(done.getAttribute('data-state')).resolves.toBe('ok');
  await expect(done.locator('.tool-result code').last().textContent()).resolves.toBe('no booking at Chez Nous: the person said decline');
  await done.scrollIntoViewIfNeeded();
  await shot(page, 'declined');
  expect(errors).toEqual([]);
});
