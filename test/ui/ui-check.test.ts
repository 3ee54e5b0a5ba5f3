/**
 * The Temporal Web UI tells a turn's story without reading code: headless Chromium opens a finished
 * run on the test dev server's UI and finds the question as the summary and each activity's
 * summary; the screenshot is kept in test-artifacts/ for a person to look at.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { ensureChromium, CHROMIUM_ARGS } from '../support/chromium';
import { startTurnHarness, type TurnHarness } from '../support/turn-harness';
import { everythingStdio } from '../support/mcp-servers';

jest.setTimeout(300_000);

const ARTIFACTS = path.resolve(__dirname, '..', '..', 'test-artifacts');
const QUESTION = 'UI check: echo the word lighthouse and add 20 and 22';

let h: TurnHarness;
let browser: Browser;

beforeAll(async () => {
  const executablePath = ensureChromium();
  h = await startTurnHarness({
    scenarios: {
      ui: {
        steps: [
          { content: [{ type: 'text', text: 'Calling both.' }, { type: 'tool_use', name: 'everything__echo', input: { message: 'lighthouse' } }, { type: 'tool_use', name: 'everything__get-sum', input: { a: 20, b: 22 } }] },
          { content: [{ type: 'text', text: 'Done: {{toolResults}}' }] },
        ],
        formatter: { conversation: [{ type: 'text', content: 'Answer: {{toolResults}}' }] },
      },
    },
    servers: { everything: everythingStdio() },
  });
  browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await h?.close();
});

it('shows the question, the activity summaries and the progress of a finished run', async () => {
  const workflowId = `ui-check-${Date.now()}`;
  await h.run({ question: QUESTION, model: 'ui' }, workflowId);
  const ui = process.env.MCP_TURNS_TEST_UI_URL!;
  const page = await browser.newPage({ viewport: { width: 1500, height: 1300 } });
  await page.goto(`${ui}/namespaces/default/workflows/${workflowId}`, { waitUntil: 'networkidle' });
  await page.getByText(QUESTION).first().waitFor({ timeout: 30_000 });
  // The local activity that checks the input and lists the tools shows by its name: UI 2.54 does not
  // render a local activity's summary on the timeline.
  for (const summary of ['Claude · step 1', 'everything · echo', 'everything · get-sum', 'format response', 'prepareTurn']) {
    await page.getByText(summary).first().waitFor({ timeout: 30_000 });
  }
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const shot = path.join(ARTIFACTS, 'ui-check.png');
  await page.screenshot({ path: shot, fullPage: true });
  expect(fs.statSync(shot).size).toBeGreaterThan(20_000);

  // The static summary (the question), static details (the config in brief) and current details.
  await page.getByRole('tab', { name: 'User Metadata' }).click();
  await page.getByText('Current Details').first().waitFor({ timeout: 30_000 });
  // The UI renders summaries and details as markdown inside sandboxed iframes: read every frame.
  const allText = async (): Promise<string> =>
    (await Promise.all(page.frames().map((f) => f.locator('body').innerText().catch(() => '')))).join('\n');
  let text = '';
  for (let i = 0; i < 60 && !/done/.test(text); i++) {
    text = await allText();
    if (!/done/.test(text)) await page.waitForTimeout(500);
  }
  expect(text).toContain(QUESTION);
  expect(text).toMatch(/model\s+ui/);
  expect(text).toMatch(/formatter\s+on/);
  expect(text).toMatch(/done\s+·\s+step 2.5\s+·\s+2 tool call\(s\)/);
  await page.screenshot({ path: path.join(ARTIFACTS, 'ui-check-metadata.png'), fullPage: true });
});

it('shows each local tool call by its name: a tool seen answering quickly runs as a local activity named as the call', async () => {
  // Three quick calls of each tool in this worker make them local (src/mcp/tool-speed.ts).
  for (let i = 0; i < 3; i++) await h.run({ question: `${QUESTION} (warm ${i})`, model: 'ui' });
  const workflowId = `ui-check-local-${Date.now()}`;
  await h.run({ question: `${QUESTION} (local)`, model: 'ui' }, workflowId);
  const { events } = await h.client.workflow.getHandle(workflowId).fetchHistory();
  expect(events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'callTool')).toEqual([]);
  const ui = process.env.MCP_TURNS_TEST_UI_URL!;
  const page = await browser.newPage({ viewport: { width: 1500, height: 1300 } });
  await page.goto(`${ui}/namespaces/default/workflows/${workflowId}`, { waitUntil: 'networkidle' });
  for (const label of ['Claude · step 1', 'everything · echo', 'everything · get-sum', 'format response', 'prepareTurn']) {
    await page.getByText(label).first().waitFor({ timeout: 30_000 });
  }
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, 'ui-check-local-calls.png'), fullPage: true });
});
