/**
 * The chat page of `mcp-turns serve` (src/serve/page/) driven by Debian's Chromium against the real
 * server: the HTTP app in process, the test dev server, a worker with server-everything (get-sum
 * waits for approval) and the stub Claude behind the real SDK. A token is configured, so each page
 * signs in through its own panel first, and the token's name is the approver the turn records.
 *
 * The page cannot choose a model: a chat the page creates runs the worker's default model (the
 * `page` scenario); the approval and reload tests open a conversation started beforehand with its
 * own turn options (as the CLI does, but owned by the page's token: a token that is not an admin's
 * sees only its own conversations), then send their message from the page. The last test signs in
 * as two users and an admin in one browser profile: each user sees only their own conversations,
 * the admin everyone's with whose each is.
 * Screenshots go to test-artifacts/chat-page-*.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { FastifyInstance } from 'fastify';
import { resolveServeSettings } from '../../src/config/serve-settings';
import { startConversation } from '../../src/client/conversation-client';
import { ownerMemo, ownerSearchAttributes } from '../../src/client/owner';
import { tokenCaller } from '../../src/serve/caller';
import type { ChatTurnResult } from '../../src/core/turn-result';
import { ensureChromium, CHROMIUM_ARGS } from '../support/chromium';
import { startServeApp } from '../support/serve-app';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { everythingStdio } from '../support/mcp-servers';

jest.setTimeout(120_000);

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts');
const TOKEN = 'chat-page-token-5d0a3e-never-shown';
const APPROVER = 'page-tester';
/** Whose the conversations started beforehand are: the page's token holder (not an admin). */
const OWNER = tokenCaller(APPROVER, false).owner;
/** Two users and an admin, for who sees what. */
const ALICE = { name: 'alice', token: 'chat-page-alice-token-8c41f9-never-shown' };
const BOB = { name: 'bob', token: 'chat-page-bob-token-27e6d0-never-shown' };
const ADMIN = { name: 'operator', token: 'chat-page-admin-token-f3b5a1-never-shown', role: 'admin' as const };
const UI_URL = process.env.MCP_TURNS_TEST_UI_URL!;
const RUN = Date.now().toString(36);

/** What the page's answer reads once whole (the formatter's conversation, plain text). */
const answerOf = (toolResult: string): string =>
  `The echo tool answered: ${toolResult}. ` +
  'Every turn of this chat runs as a durable Temporal workflow, so the answer keeps being written while the page is away. ' +
  'Each Claude call and each tool call is an activity with its own retries, and the stream you are reading is replayed from the workflow itself.';

/** The typed answer of the `claude-sonnet-4-6-typed` scenario. */
const TICKET = { ticket: 4711, customer: { name: 'Ada Lovelace', tier: 'gold' }, items: [{ sku: 'A1', qty: 2 }, { sku: 'B2', qty: 1 }], urgent: true };
const TICKET_SCHEMA = {
  type: 'object',
  properties: {
    ticket: { type: 'integer' },
    customer: { type: 'object', properties: { name: { type: 'string' }, tier: { type: 'string', enum: ['gold', 'silver'] } }, required: ['name', 'tier'] },
    items: { type: 'array', items: { type: 'object', properties: { sku: { type: 'string' }, qty: { type: 'integer' } }, required: ['sku', 'qty'] } },
    urgent: { type: 'boolean' },
  },
  required: ['ticket', 'customer', 'items', 'urgent'],
};

const SLOW_SENTENCES = Array.from(
  { length: 12 },
  (_, i) => `Sentence ${i + 1} of the long answer arrives a few characters at a time, from the formatter's streamed input.`,
);
const SLOW_ANSWER = SLOW_SENTENCES.join(' ');

let h: TurnHarness;
let app: FastifyInstance;
let base: string;
let browser: Browser;
const contexts: BrowserContext[] = [];
/** Conversations the tests made, ended before the worker stops (a test that failed may leave one waiting). */
const conversations: string[] = [];

beforeAll(async () => {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const executablePath = ensureChromium();
  const [harness, b] = await Promise.all([
    startTurnHarness({
      scenarios: {
        // The worker's default model: every chat the page creates. The answer streams a few
        // characters at a time (the formatter's JSON, 12 characters per delta) for about 2 s: the
        // worker publishes a running call's text every 300 ms.
        page: {
          perTurn: true,
          streamDelayMs: 20,
          formatterStreamDelayMs: 80,
          steps: [
            { content: [{ type: 'text', text: 'Let me run that through the echo tool first.' }, { type: 'tool_use', name: 'everything__echo', input: { message: '{{question}}' } }] },
            { content: [{ type: 'text', text: 'The tool answered, writing it up.' }] },
          ],
          formatter: { conversation: [{ type: 'text', content: answerOf('{{toolResults}}') }] },
        },
        // A typed answer (the turn's output schema), its JSON written slowly enough to be seen growing.
        'claude-sonnet-4-6-typed': {
          perTurn: true,
          streamDelayMs: 60,
          steps: [{ content: [{ type: 'text', text: 'Reading the ticket.' }] }],
          output: JSON.stringify(TICKET, null, 2),
        },
        // Claude's own web search, paused once, then an answer citing what it found.
        search: {
          perTurn: true,
          steps: [
            {
              content: [
                { type: 'text', text: 'Let me search the web.' },
                { type: 'server_tool_use', name: 'web_search', input: { query: '{{question}}' } },
                { type: 'web_search_tool_result', content: [{ url: 'https://docs.temporal.io/workflows', title: 'Temporal Workflows' }] },
              ],
              stopReason: 'pause_turn',
            },
            {
              content: [
                {
                  type: 'text',
                  text: 'Workflows are durable.',
                  citations: [{ type: 'web_search_result_location', url: 'https://docs.temporal.io/workflows', title: 'Temporal Workflows', cited_text: 'durable' }],
                },
              ],
            },
          ],
          formatter: { conversation: [{ type: 'text', content: 'Workflows are durable, says the web.' }] },
        },
        // get-sum waits for approval (the server's policy below).
        approve: {
          perTurn: true,
          streamDelayMs: 10,
          steps: [
            { content: [{ type: 'text', text: 'I will add them with the get-sum tool.' }, { type: 'tool_use', name: 'everything__get-sum', input: { a: 20, b: 22 } }] },
            { content: [{ type: 'text', text: 'The tool has answered.' }] },
          ],
          formatter: { conversation: [{ type: 'text', content: 'get-sum says: {{toolResults}}' }] },
        },
        // Long enough (about 7 s of answer) to reload the page in the middle of it.
        slow: {
          perTurn: true,
          streamDelayMs: 20,
          formatterStreamDelayMs: 65,
          steps: [{ content: [{ type: 'text', text: 'Writing a long answer.' }] }],
          formatter: { conversation: [{ type: 'text', content: SLOW_ANSWER }] },
        },
      },
      servers: { everything: everythingStdio({ approval: { always: ['get-sum'] } }) },
      claude: { model: 'page' },
    }),
    chromium.launch({ executablePath, args: CHROMIUM_ARGS }),
  ]);
  h = harness;
  browser = b;
  const settings = resolveServeSettings({ tokens: [{ name: APPROVER, token: TOKEN }, ALICE, BOB, ADMIN] }, { host: '127.0.0.1', port: 0 }, {});
  ({ app, base } = await startServeApp(h, settings, UI_URL));
});

afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => {});
  await browser?.close();
  await app?.close();
  // serve follows a message's outcome until its turn ends, whoever left (src/serve/routes/conversations.ts
  // sentTurnEvents): end what still runs so no call is in flight when the client closes.
  for (const id of conversations) {
    const handle = h.client.workflow.getHandle(id);
    if ((await handle.describe().catch(() => undefined))?.status.name === 'RUNNING') await handle.terminate('chat-page test done').catch(() => {});
  }
  await h?.close();
});

interface Sample {
  len: number;
  status: string;
  text: string;
}

// What the functions below use of the page's DOM (this project compiles without the DOM types).
interface PageElement {
  dataset: Record<string, string | undefined>;
  textContent: string | null;
  querySelector(selector: string): PageElement | null;
}
interface PageGlobals {
  document: PageElement & { querySelectorAll(selector: string): ArrayLike<PageElement> };
  MutationObserver: new (callback: () => void) => { observe(target: unknown, options: Record<string, unknown>): void };
  __samples?: Sample[];
}

/**
 * Runs in the page before its own script, again after every reload: records the last turn's answer
 * text and status at every change.
 */
function installSampler(): void {
  const page = globalThis as unknown as PageGlobals;
  const samples: Sample[] = (page.__samples = []);
  new page.MutationObserver(() => {
    const turns = page.document.querySelectorAll('section.turn');
    const turn = turns[turns.length - 1];
    if (!turn) return;
    const text = turn.querySelector('.answer')?.textContent ?? '';
    const status = turn.dataset.status ?? '';
    const last = samples[samples.length - 1];
    if (!last || last.len !== text.length || last.status !== status) samples.push({ len: text.length, status, text });
  }).observe(page.document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['data-status'] });
}

/** In the page: the first turn is running and its answer is longer than `n` characters. */
function answerRunningPast(n: number): boolean {
  const turn = (globalThis as unknown as PageGlobals).document.querySelector('section.turn');
  return turn?.dataset.status === 'running' && (turn.querySelector('.answer')?.textContent?.length ?? 0) > n;
}

/** Lengths of the answer seen while the turn was not finished, in order, each longer than the one before. */
function growingLengths(samples: Sample[]): number[] {
  const out: number[] = [];
  for (const s of samples) {
    if (s.status === 'completed') break;
    if (s.len > 0 && s.len > (out.at(-1) ?? 0)) out.push(s.len);
  }
  return out;
}

const shot = async (page: Page, name: string): Promise<string> => {
  const file = path.join(ARTIFACTS, `chat-page-${name}.png`);
  await page.screenshot({ path: file });
  expect(fs.statSync(file).size).toBeGreaterThan(10_000);
  return file;
};

interface Opened {
  page: Page;
  errors: string[];
}

/**
 * A fresh browser profile on the page (at conversation `id` when given; of the app at `at`), signed
 * in through the page's panel (with `token`, the page tester's unless told).
 */
async function openPage(id?: string, signInShot?: string, at = base, token = TOKEN): Promise<Opened> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  contexts.push(context);
  await context.addInitScript(installSampler);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${at}/${id ? `#c=${encodeURIComponent(id)}` : ''}`);
  await signIn(page, token, signInShot);
  if (id) await page.locator('#conversation-id', { hasText: id }).waitFor({ timeout: 30_000 });
  return { page, errors };
}

/** Signs in through the page's panel, asked for before anything else (the panel keeps the token in this browser only). */
async function signIn(page: Page, token: string, signInShot?: string): Promise<void> {
  await page.locator('#signin').waitFor({ state: 'visible', timeout: 30_000 });
  await page.locator('#token-input').fill(token);
  if (signInShot) await shot(page, signInShot);
  await page.locator('#signin-submit').click();
  await page.locator('#signin').waitFor({ state: 'hidden', timeout: 10_000 });
  await page.locator('#connection[data-state="ok"]').waitFor({ timeout: 30_000 });
  // Signed in once the page has read who it is (from /v1/info, with the token).
  await page.locator('#account-who').waitFor({ state: 'visible', timeout: 30_000 });
}

/** The sidebar item of conversation `id`, reloading until the server lists it (visibility may lag a start). */
async function listedItem(page: Page, id: string) {
  const item = page.locator(`.conversation-item[data-conversation-id="${id}"]`);
  await listLoaded(page);
  for (let tries = 0; !(await item.count()) && tries < 30; tries++) {
    await page.waitForTimeout(1000);
    await page.reload();
    await page.locator('#connection[data-state="ok"]').waitFor({ timeout: 30_000 });
    await listLoaded(page);
  }
  return item;
}

/** Waits until the sidebar holds the server's list (not only what this browser noted). */
async function listLoaded(page: Page): Promise<void> {
  await page.locator('#conversation-list[aria-busy="false"]').waitFor({ state: 'attached', timeout: 30_000 });
}

/** Types `text` into the composer and sends it with Enter. */
async function send(page: Page, text: string): Promise<void> {
  const composer = page.locator('#composer');
  await composer.fill(text);
  await page.locator('#send:not([disabled])').waitFor({ timeout: 10_000 });
  await composer.press('Enter');
  await page.locator('section.turn .user-bubble', { hasText: text }).waitFor({ timeout: 10_000 });
}

const squash = (s: string): string => s.replace(/\s+/g, ' ').trim();
const samplesOf = (page: Page): Promise<Sample[]> => page.evaluate(() => (globalThis as unknown as PageGlobals).__samples ?? []);
const turnUrl = (id: string): string => `${UI_URL}/namespaces/default/workflows/${encodeURIComponent(id)}`;

it('streams the answer as it is written, shows the tool call with its result and links the turn to the Temporal UI', async () => {
  const { page, errors } = await openPage(undefined, 'signin');
  const question = `Echo the word lighthouse-${RUN}`;
  await send(page, question);
  const convId = decodeURIComponent(/#c=([^&]+)/.exec(page.url())![1]!);
  conversations.push(convId);
  expect(await page.locator('#conversation-id').textContent()).toBe(convId);

  // Mid-stream: some of the answer is there, the turn is still running.
  const turn = page.locator('section.turn').first();
  await page.waitForFunction(answerRunningPast, 30, { timeout: 60_000, polling: 50 });
  await shot(page, 'streaming');
  await page.locator('section.turn[data-status="completed"]').waitFor({ timeout: 60_000 });
  await shot(page, 'finished');

  // Progressive: the answer was seen at several growing lengths before the turn completed.
  const expected = answerOf(`Echo: ${question}`);
  const samples = await samplesOf(page);
  const partial = growingLengths(samples).filter((n) => n < expected.length);
  expect(partial.length).toBeGreaterThanOrEqual(3);
  for (const s of samples.filter((x) => x.status !== 'completed' && x.len > 0)) expect(expected.startsWith(s.text)).toBe(true);
  expect(squash((await turn.locator('.answer').textContent()) ?? '')).toBe(expected);
  // The step texts are shown as they were written, before the answer.
  await expect(turn.locator('.step-text').first().textContent()).resolves.toContain('Let me run that through the echo tool first.');
  // What the turn offered Claude: a collapsed line above its text (server-everything's tools, nothing left out).
  const tools = turn.locator('.turn-tools');
  await expect(tools.locator('.tools-summary').textContent()).resolves.toMatch(/^\d+ tools offered$/);
  await expect(tools.getAttribute('open')).resolves.toBeNull();
  await expect(tools.locator('.tools-body').isVisible()).resolves.toBe(false);

  // The tool call: name, arguments, result and how long it took.
  const card = turn.locator('.tool-card');
  await expect(card.count()).resolves.toBe(1);
  await expect(card.getAttribute('data-state')).resolves.toBe('ok');
  await expect(card.locator('.tool-name').textContent()).resolves.toBe('everything·echo');
  await expect(card.locator('.tool-result code').last().textContent()).resolves.toBe(`Echo: ${question}`);
  const duration = card.locator('.tool-duration');
  await expect(duration.isVisible()).resolves.toBe(true);
  expect(await duration.textContent()).toMatch(/^\d+ ms$|^\d+\.\d+ s$/);

  // The turn's link opens its workflow in the Temporal UI; the workflow is that turn of this conversation.
  const turnId = (await turn.getAttribute('data-turn-id'))!;
  expect(turnId).toBe(`${convId}-turn-1`);
  const link = turn.locator('a.temporal-link');
  await expect(link.isVisible()).resolves.toBe(true);
  expect(await link.getAttribute('href')).toBe(turnUrl(turnId));
  const handle = h.client.workflow.getHandle(turnId);
  expect((await handle.describe()).type).toBe('chatTurn');
  const result = (await handle.result()) as ChatTurnResult;
  expect(result.response.conversation).toBe(expected);
  expect(result.toolCalls.map((c) => [c.name, c.durationMs > 0])).toEqual([['everything__echo', true]]);
  expect((await fetch(turnUrl(turnId))).status).toBe(200);
  // The conversation's own link, in the header.
  expect(await page.locator('#conversation-temporal-link').getAttribute('href')).toBe(turnUrl(convId));
  expect(errors).toEqual([]);
});

it('asks for approval on the card; Approve runs the call and records the signed-in token as the approver', async () => {
  const convId = `page-approve-${RUN}`;
  conversations.push(convId);
  await startConversation(h.client, convId, { taskQueue: h.taskQueue, owner: OWNER, options: { model: 'approve' } });
  const { page, errors } = await openPage(convId);
  await send(page, 'What is 20 + 22?');

  const waiting = page.locator('.tool-card[data-state="waiting"]');
  await waiting.waitFor({ timeout: 60_000 });
  await expect(waiting.locator('.tool-state').textContent()).resolves.toBe('Waiting for approval');
  // The arguments are open for the person deciding.
  await expect(waiting.locator('.tool-args pre').isVisible()).resolves.toBe(true);
  expect(JSON.parse((await waiting.locator('.tool-args pre').textContent())!)).toEqual({ a: 20, b: 22 });
  await expect(page.locator('.working-label').textContent()).resolves.toBe('Paused until someone approves or denies everything · get-sum');
  await waiting.locator('button.approve').waitFor({ state: 'visible' });
  await shot(page, 'approval');

  await waiting.locator('button.approve').click();
  const card = page.locator('.tool-card').first();
  await page.locator('.tool-card[data-state="ok"]').waitFor({ timeout: 60_000 });
  await page.locator('section.turn[data-status="completed"]').waitFor({ timeout: 60_000 });
  await expect(card.locator('.tool-result code').last().textContent()).resolves.toBe('The sum of 20 and 22 is 42.');
  await expect(card.locator('.tool-decision').textContent()).resolves.toContain(`approved by ${APPROVER}`);
  await expect(card.locator('.tool-approval').isHidden()).resolves.toBe(true);
  expect(squash((await page.locator('section.turn .answer').textContent()) ?? '')).toBe('get-sum says: The sum of 20 and 22 is 42.');
  await shot(page, 'approved');

  // The turn recorded who approved: the name of the token the page signed in with.
  const turnId = (await page.locator('section.turn').getAttribute('data-turn-id'))!;
  const result = (await h.client.workflow.getHandle(turnId).result()) as ChatTurnResult;
  expect(result.approvals).toEqual([expect.objectContaining({ name: 'everything__get-sum', outcome: 'approved', decidedBy: APPROVER })]);
  expect(JSON.stringify(result)).not.toContain(TOKEN);
  expect(errors).toEqual([]);
});

it("shows Claude's web search as a card of Claude's, with what it found, and the answer's sources", async () => {
  const convId = `page-search-${RUN}`;
  conversations.push(convId);
  await startConversation(h.client, convId, { taskQueue: h.taskQueue, owner: OWNER, options: { model: 'search', servers: [], serverTools: { web_search: true } } });
  const { page, errors } = await openPage(convId);
  await send(page, 'Are workflows durable?');
  await page.locator('section.turn[data-status="completed"]').waitFor({ timeout: 60_000 });
  const card = page.locator('.tool-card', { hasText: 'web_search' });
  await expect(card.locator('.tool-server').textContent()).resolves.toBe('Claude');
  await expect(card.getAttribute('data-state')).resolves.toBe('ok');
  await expect(card.locator('.tool-duration').isHidden()).resolves.toBe(true);
  // The sources as links, each quoted passage under its source.
  const source = page.locator('.artifact .sources li a');
  await expect(source.getAttribute('href')).resolves.toBe('https://docs.temporal.io/workflows');
  await expect(source.textContent()).resolves.toBe('Temporal Workflows');
  await expect(page.locator('.artifact .sources blockquote').textContent()).resolves.toBe('durable');
  await shot(page, 'web-search');
  expect(errors).toEqual([]);
});

it('shows a typed answer as JSON under the answer, growing while it is written', async () => {
  const convId = `page-typed-${RUN}`;
  conversations.push(convId);
  await startConversation(h.client, convId, { taskQueue: h.taskQueue, owner: OWNER, options: { model: 'claude-sonnet-4-6-typed', servers: [], output: { schema: TICKET_SCHEMA } } });
  const { page, errors } = await openPage(convId);
  await send(page, 'Read ticket 4711');
  const output = page.locator('section.turn pre.turn-output');
  await page.locator('section.turn pre.turn-output.partial').waitFor({ timeout: 60_000 });
  const partial = JSON.parse((await output.textContent())!) as Record<string, unknown>;
  expect(Object.keys(partial).length).toBeLessThan(Object.keys(TICKET).length + 1);
  await page.locator('section.turn[data-status="completed"]').waitFor({ timeout: 60_000 });
  await expect(output.getAttribute('class')).resolves.toBe('turn-output');
  expect(JSON.parse((await output.textContent())!)).toEqual(TICKET);
  await shot(page, 'typed-output');
  expect(errors).toEqual([]);
});

it('reloaded in the middle of an answer, shows the same conversation and the answer going on, once', async () => {
  const convId = `page-reload-${RUN}`;
  conversations.push(convId);
  // Four tools at most, and a server the worker does not have: the turn's tools line says both.
  await startConversation(h.client, convId, {
    taskQueue: h.taskQueue,
    owner: OWNER,
    options: { model: 'slow', servers: ['everything', 'nowhere'], maxToolsPerRequest: 4, toolSearch: 'off' },
  });
  const { page, errors } = await openPage(convId);
  const question = 'Write the long answer, please';
  await send(page, question);
  await page.waitForFunction(answerRunningPast, 20, { timeout: 60_000, polling: 50 });
  const before = (await page.locator('section.turn .answer').textContent())!;
  const turnId = (await page.locator('section.turn').getAttribute('data-turn-id'))!;
  expect(turnId).toBe(`${convId}-turn-1`);

  await page.reload();
  // The token stays in this browser: no second sign-in.
  await page.locator('#connection[data-state="ok"]').waitFor({ timeout: 30_000 });
  await expect(page.locator('#signin').isHidden()).resolves.toBe(true);
  // The same conversation, from the URL hash: its id, its question and its turn.
  expect(new URL(page.url()).hash).toBe(`#c=${convId}`);
  await page.locator('#conversation-id', { hasText: convId }).waitFor({ timeout: 30_000 });
  await page.locator(`section.turn[data-turn-id="${turnId}"] .user-bubble`, { hasText: question }).waitFor({ timeout: 30_000 });
  await page.waitForFunction(answerRunningPast, before.length, { timeout: 60_000, polling: 50 });
  await shot(page, 'reloaded');
  await page.locator('section.turn[data-status="completed"]').waitFor({ timeout: 60_000 });
  await shot(page, 'reloaded-finished');

  // After the reload the answer grew while the turn was running: it was not only replayed whole.
  const samples = await samplesOf(page);
  const partial = growingLengths(samples).filter((n) => n > before.length && n < SLOW_ANSWER.length);
  expect(partial.length).toBeGreaterThanOrEqual(3);
  for (const s of samples.filter((x) => x.len > 0)) expect(SLOW_ANSWER.startsWith(s.text)).toBe(true);
  // Whole, and once: one turn, one answer, each sentence once.
  await expect(page.locator('section.turn').count()).resolves.toBe(1);
  const answer = squash((await page.locator('section.turn .answer').textContent()) ?? '');
  expect(answer).toBe(SLOW_ANSWER);
  for (const sentence of SLOW_SENTENCES) expect(answer.split(sentence).length - 1).toBe(1);
  const result = (await h.client.workflow.getHandle(turnId).result()) as ChatTurnResult;
  expect(result.response.conversation).toBe(SLOW_ANSWER);

  // What the turn offered, once after the reload: collapsed, then open to the lists.
  const tools = page.locator('section.turn .turn-tools');
  await expect(tools.count()).resolves.toBe(1);
  const dropped = result.droppedTools.length;
  expect(dropped).toBeGreaterThan(0);
  await expect(tools.locator('.tools-summary').textContent()).resolves.toBe(`4 tools offered · ${dropped} dropped · 1 unavailable`);
  await expect(tools.getAttribute('data-tone')).resolves.toBe('warn');
  await tools.locator('summary').click();
  await tools.locator('.tools-body').waitFor({ state: 'visible' });
  const lists = squash((await tools.locator('.tools-body').innerText()) ?? '');
  expect(lists).toMatch(/^Offered everything /);
  expect(lists).toContain(`${result.droppedTools[0]!.name} over maxToolsPerRequest (4)`);
  expect(lists).toMatch(/Unavailable nowhere not configured on the worker$/);
  await tools.scrollIntoViewIfNeeded();
  await shot(page, 'tools');
  expect(errors).toEqual([]);
});

it('flags a conversation that timed out in the sidebar, in the words the server sends', async () => {
  const convId = `page-timed-out-${RUN}`;
  // A conversation whose run may last one second: it times out waiting for its first message. It is
  // the page tester's (as startConversation marks an owner's), or their page would not list it.
  const handle = await h.client.workflow.start('conversation', {
    workflowId: convId,
    taskQueue: h.taskQueue,
    args: [{}],
    workflowExecutionTimeout: '1s',
    typedSearchAttributes: ownerSearchAttributes(OWNER),
    memo: ownerMemo(OWNER),
  });
  await expect(handle.result()).rejects.toThrow();
  expect((await handle.describe()).status.name).toBe('TIMED_OUT');
  const { page, errors } = await openPage();
  // The list is read from visibility, which may lag the close: reload until the item is there.
  const item = await listedItem(page, convId);
  await expect(item.getAttribute('data-status')).resolves.toBe('timed_out');
  await expect(item.locator('.conversation-meta').textContent()).resolves.toMatch(/ · timed out$/);
  await item.scrollIntoViewIfNeeded();
  await shot(page, 'timed-out-in-sidebar');
  expect(errors).toEqual([]);
});

it("suggests questions about the worker's MCP servers, and none when serve does not know them", async () => {
  const { page, errors } = await openPage();
  const suggestions = page.locator('.empty-state .suggestion');
  await suggestions.first().waitFor({ state: 'visible', timeout: 30_000 });
  // The worker has server-everything only: the suggestions name it, and nothing it does not have.
  expect(await suggestions.allTextContents()).toEqual(['What tools can you use?', 'What can you do with the everything server?']);
  await shot(page, 'suggestions');
  await suggestions.nth(1).click();
  expect(await page.locator('#composer').inputValue()).toBe('What can you do with the everything server?');
  expect(errors).toEqual([]);

  // A serve whose work goes to a worker elsewhere does not know its servers: no suggestions, not wrong ones.
  const settings = resolveServeSettings({ tokens: [{ name: APPROVER, token: TOKEN }] }, { host: '127.0.0.1', port: 0 }, {});
  const elsewhere = await startServeApp(h, settings, UI_URL, { workerElsewhere: true });
  try {
    const other = await openPage(undefined, undefined, elsewhere.base);
    await other.page.locator('.empty-state h2').waitFor({ state: 'visible', timeout: 30_000 });
    await expect(other.page.locator('.empty-state .suggestion').count()).resolves.toBe(0);
    await expect(other.page.locator('.empty-state .suggestions').isVisible()).resolves.toBe(false);
    await shot(other.page, 'no-suggestions');
    expect(other.errors).toEqual([]);
  } finally {
    await elsewhere.app.close();
  }
});

it("shows each user their own conversations only, even in a browser another used, and an admin everyone's with whose each is", async () => {
  // Bob's own conversation, and one started outside serve (no owner: only an admin sees it).
  const bobConv = `page-bob-${RUN}`;
  const cliConv = `page-cli-${RUN}`;
  conversations.push(bobConv, cliConv);
  await startConversation(h.client, bobConv, { taskQueue: h.taskQueue, owner: tokenCaller(BOB.name, false).owner, summary: "Bob's travel plans" });
  await startConversation(h.client, cliConv, { taskQueue: h.taskQueue, summary: 'Nightly report from the CLI' });

  // Alice chats through the page: her conversation is in her sidebar, titled by her question.
  const { page, errors } = await openPage(undefined, undefined, base, ALICE.token);
  const account = page.locator('#account-who');
  await expect(page.locator('#account-name').textContent()).resolves.toBe(ALICE.name);
  await expect(page.locator('#account-admin').isHidden()).resolves.toBe(true);
  await expect(account.getAttribute('title')).resolves.toBe(`Signed in as ${ALICE.name}`);
  const question = `Alice's private question ${RUN}`;
  await send(page, question);
  const aliceConv = decodeURIComponent(/#c=([^&]+)/.exec(page.url())![1]!);
  conversations.push(aliceConv);
  await page.locator('section.turn[data-status="completed"]').waitFor({ timeout: 60_000 });
  const aliceItem = await listedItem(page, aliceConv);
  await expect(aliceItem.locator('.conversation-title').textContent()).resolves.toBe(question);
  // Hers only: not Bob's, not the unowned one; and no owners shown to someone who is not an admin.
  await expect(page.locator(`.conversation-item[data-conversation-id="${bobConv}"]`).count()).resolves.toBe(0);
  await expect(page.locator(`.conversation-item[data-conversation-id="${cliConv}"]`).count()).resolves.toBe(0);
  await expect(page.locator('.conversation-owner').count()).resolves.toBe(0);
  await shot(page, 'alice-sidebar');
  // This browser noted her conversation under her identity.
  const storage = (): Promise<Record<string, string>> =>
    page.evaluate(() => {
      const store = (globalThis as unknown as { localStorage: { length: number; key(i: number): string | null; getItem(k: string): string | null } }).localStorage;
      const out: Record<string, string> = {};
      for (let i = 0; i < store.length; i++) {
        const key = store.key(i)!;
        out[key] = store.getItem(key) ?? '';
      }
      return out;
    });
  const aliceList = (await storage())['mcp-turns:conversations:token:alice'];
  expect(aliceList).toContain(aliceConv);

  // Alice signs out: the panel asks for a token again, and her notes left this browser with her token.
  await page.locator('#sign-out').click();
  await page.locator('#signin').waitFor({ state: 'visible', timeout: 30_000 });
  expect(new URL(page.url()).hash).toBe('');
  const afterSignOut = await storage();
  expect(Object.keys(afterSignOut).filter((k) => k.startsWith('mcp-turns:'))).toEqual([]);
  expect(JSON.stringify(afterSignOut)).not.toContain(aliceConv);
  // As if she had not signed out (her token replaced), an earlier page had kept one list for all,
  // and Bob's own list had come to name her conversation: Bob's page shows none of it (the last
  // once the server has answered 404 for it).
  await page.evaluate(
    ([list, bobList]) => {
      const store = (globalThis as unknown as { localStorage: { setItem(k: string, v: string): void } }).localStorage;
      store.setItem('mcp-turns:conversations:token:alice', list!);
      store.setItem('mcp-turns:conversations', list!);
      store.setItem('mcp-turns:conversations:token:bob', bobList!);
    },
    [aliceList, JSON.stringify([{ id: aliceConv, createdAt: Date.now() - 120_000, sent: true }])],
  );

  // Bob signs in in the same browser: his conversation is there, Alice's is not.
  await signIn(page, BOB.token);
  await expect(page.locator('#account-name').textContent()).resolves.toBe(BOB.name);
  const bobItem = await listedItem(page, bobConv);
  await expect(bobItem.locator('.conversation-title').textContent()).resolves.toBe("Bob's travel plans");
  await page.locator(`.conversation-item[data-conversation-id="${aliceConv}"]`).waitFor({ state: 'detached', timeout: 30_000 });
  await expect(page.locator('.conversation-item', { hasText: question }).count()).resolves.toBe(0);
  await expect(page.locator(`.conversation-item[data-conversation-id="${cliConv}"]`).count()).resolves.toBe(0);
  await shot(page, 'bob-sidebar');
  const bobStorage = await storage();
  expect(bobStorage['mcp-turns:conversations']).toBeUndefined();
  expect(bobStorage['mcp-turns:conversations:token:bob'] ?? '').not.toContain(aliceConv);
  // Alice's link shows Bob nothing of hers: to him it is a chat not started.
  await page.goto(`${base}/#c=${encodeURIComponent(aliceConv)}`);
  await page.locator('#conversation-id', { hasText: aliceConv }).waitFor({ timeout: 30_000 });
  await page.locator('#conversation-turns', { hasText: 'not started' }).waitFor({ timeout: 30_000 });
  await expect(page.locator('section.turn').count()).resolves.toBe(0);
  await expect(page.locator('#conversation-title').textContent()).resolves.toBe('New chat');
  expect(await page.locator('body').innerText()).not.toContain(question);

  // An admin, in the same browser after Bob: everyone's conversations, each with whose it is.
  await page.locator('#sign-out').click();
  await signIn(page, ADMIN.token);
  await expect(page.locator('#account-name').textContent()).resolves.toBe(ADMIN.name);
  await expect(page.locator('#account-admin').isVisible()).resolves.toBe(true);
  const owned = async (id: string): Promise<string | null> => (await listedItem(page, id)).locator('.conversation-owner').textContent();
  await expect(owned(aliceConv)).resolves.toBe(ALICE.name);
  await expect(owned(bobConv)).resolves.toBe(BOB.name);
  await expect(owned(cliConv)).resolves.toBe('no owner');
  await expect(page.locator(`.conversation-item[data-conversation-id="${aliceConv}"] .conversation-title`).textContent()).resolves.toBe(question);
  await shot(page, 'admin-owners');
  // Alice's conversation opened: her question and answer, and whose it is in the header.
  await page.locator(`.conversation-item[data-conversation-id="${aliceConv}"]`).click();
  await page.locator('section.turn .user-bubble', { hasText: question }).waitFor({ timeout: 30_000 });
  await page.locator('section.turn[data-status="completed"]').waitFor({ timeout: 60_000 });
  await expect(page.locator('#conversation-owner').textContent()).resolves.toBe(ALICE.name);
  await shot(page, 'admin-opens-alice');
  expect(errors).toEqual([]);
});
