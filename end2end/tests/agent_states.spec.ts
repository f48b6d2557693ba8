// The agents' states in the web UI against a real server (scripts/e2e.sh)
// and real PTYs: unattended agents that exit 3, die by a signal and draw
// Claude Code's own usage-limit screen (the bottom of a recorded fixture,
// cut to the 80×24 terminal an agent starts in, as
// server/tests/agent_states.rs does), and one that keeps working. The task
// list shows each state in words and marks the rows that need you; the task
// page shows the state, its reason and the screen lines; /harness lists the
// agents that need you; the badge, the tab title and the phone menu show
// the one count `GET /api/waiting` gives. At 390 and 1280 px, in English
// and Chinese, with screenshots.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect, Page, APIRequestContext, Browser } from '@playwright/test';
import { api } from './api';
import { STORAGE_STATE } from '../global-setup';

const uid = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const FIXTURES = join(__dirname, '..', '..', 'crates', 'core', 'tests', 'fixtures', 'agent_screens');

/** A recorded screen as an 80×24 terminal shows it (see server/tests/agent_states.rs). */
function fixtureRows(cli: string, name: string): string[] {
  const text = readFileSync(join(FIXTURES, cli, `${name}.txt`), 'utf8');
  const body = text.slice(text.indexOf('\n') + 1).replace(/\n+$/, '');
  const rows: string[] = [];
  for (const raw of body.split('\n')) {
    const row = Array.from(raw).slice(0, 80).join('').trimEnd();
    if (row.trim() === '' && rows.length > 0 && rows[rows.length - 1].trim() === '') continue;
    rows.push(row);
  }
  return rows.slice(Math.max(0, rows.length - 24));
}

/** A script that draws `rows` cursor-positioned (as a TUI does), then waits. */
function drawing(dir: string, name: string, rows: string[]): string {
  let bytes = '\x1b[2J\x1b[H';
  rows.forEach((row, i) => { bytes += `\x1b[${i + 1};1H${row}`; });
  const screen = join(dir, `${name}.screen`);
  writeFileSync(screen, bytes);
  const script = join(dir, `${name}.sh`);
  writeFileSync(script, `cat '${screen}'\nexec sleep 600\n`);
  return script;
}

async function task(request: APIRequestContext, title: string, provider: string, command: string[]) {
  const created = await api(request, 'POST', '/api/tasks', { title, agent: { provider, command, cwd: tmpdir() } });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  expect((await api(request, 'POST', `/api/tasks/${id}/start`)).status).toBe(200);
  return id;
}

async function unattended(request: APIRequestContext, id: string, on: boolean) {
  expect((await api(request, 'PUT', `/api/tasks/${id}/unattended`, { on })).status).toBe(200);
}

async function stateOf(request: APIRequestContext, id: string, state: string) {
  await expect.poll(async () => (await api(request, 'GET', `/api/tasks/${id}`)).body.agentState?.state,
    { timeout: 20_000, message: `${id} becomes ${state}` }).toBe(state);
}

async function waitingTotal(request: APIRequestContext): Promise<number> {
  const w = await api(request, 'GET', '/api/waiting');
  expect(w.status).toBe(200);
  expect(w.body.total).toBe(w.body.questions + w.body.approvals + w.body.agents);
  return w.body.total;
}

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return errors;
}

async function open(page: Page, url: string) {
  await page.goto(url);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('header.topnav')).toHaveAttribute('data-live', 'open');
}

async function noSidewaysScroll(page: Page) {
  expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
}

const SIZES = [
  { name: 'phone', viewport: { width: 390, height: 844 }, mobile: true },
  { name: 'desktop', viewport: { width: 1280, height: 900 }, mobile: false },
];

const WORDS = {
  en: { exited: 'exited 3', crashed: 'crashed (signal 9)', limited: 'usage-limited until 12:26pm', working: 'working', needsYou: 'needs you', section: 'Needs you' },
  zh: { exited: '已退出（3）', crashed: '已崩溃（信号 9）', limited: '已达用量上限，12:26pm', working: '运行中', needsYou: '需要你', section: '需要你处理' },
};

test.describe.serial('agent states', () => {
  const ids: Record<string, string> = {};
  let target = '';

  test.beforeAll(async ({ request }) => {
    // Unattended mode needs a channel; removed again after (other specs
    // expect none).
    const added = await api(request, 'POST', '/api/settings/notify-targets/add', {
      label: `states-${uid()}`, gateway: 'hermes', downstream: 'telegram', dest: '4242', scope: 'unattended',
    });
    expect(added.status, JSON.stringify(added.body)).toBe(200);
    target = added.body.id;
    const dir = mkdtempSync(join(tmpdir(), 'agent-states-'));
    const limit = drawing(dir, 'usage_limit_subscription', fixtureRows('claude', 'usage_limit_subscription'));
    const tag = uid();
    ids.exited = await task(request, `Boom ${tag}`, 'command', ['sh', '-c', "echo 'Error: boom'; sleep 1; exit 3"]);
    ids.crashed = await task(request, `Killed ${tag}`, 'command', ['sh', '-c', 'echo dying; sleep 1; kill -9 $$']);
    ids.limited = await task(request, `Limited ${tag}`, 'claude', ['sh', limit]);
    ids.working = await task(request, `Working ${tag}`, 'command', ['sh', '-c', 'echo busy; exec sleep 600']);
    await stateOf(request, ids.exited, 'exited');
    await stateOf(request, ids.crashed, 'crashed');
    await stateOf(request, ids.limited, 'usage_limited');
    await stateOf(request, ids.working, 'working');
    // Unattended once their states are recorded: set before, the automatic
    // recovery would restart the failed ones.
    for (const id of [ids.exited, ids.crashed, ids.limited]) await unattended(request, id, true);
  });

  test.afterAll(async ({ request }) => {
    // Leave nothing that needs a person for the specs after this one.
    for (const id of Object.values(ids)) {
      await api(request, 'POST', `/api/tasks/${id}/stop`);
      await api(request, 'PUT', `/api/tasks/${id}/unattended`, { on: false });
    }
    if (target) await api(request, 'DELETE', `/api/settings/notify-targets/${target}`);
  });

  for (const lang of ['en', 'zh'] as const) {
    for (const size of SIZES) {
      test(`${lang} ${size.name}: the list, the task page and /harness`, async ({ browser, request }) => {
        const w = WORDS[lang];
        const context = await (browser as Browser).newContext({
          storageState: STORAGE_STATE, viewport: size.viewport, isMobile: size.mobile, hasTouch: size.mobile,
        });
        const base = test.info().project.use.baseURL as string;
        await context.addCookies([{ name: 'harness_lang', value: lang, url: base }]);
        const page = await context.newPage();
        const errors = watchErrors(page);
        const shot = (name: string) => page.screenshot({ path: test.info().outputPath(`${lang}-${size.name}-${name}.png`), fullPage: true });

        // The task list: each state in words, the rows that need you marked.
        await open(page, '/tasks');
        const row = (id: string) => page.locator(`tr[data-task-id="${id}"]`);
        await expect(row(ids.exited).locator('[data-agent-state="exited"]')).toHaveText(w.exited);
        await expect(row(ids.exited).locator('[data-agent-state]')).toHaveAttribute('data-severity', 'bad');
        await expect(row(ids.crashed).locator('[data-agent-state="crashed"]')).toHaveText(w.crashed);
        await expect(row(ids.limited).locator('[data-agent-state="usage_limited"]')).toContainText(w.limited);
        await expect(row(ids.limited).locator('[data-agent-state]')).toHaveAttribute('data-severity', 'warn');
        await expect(row(ids.working).locator('[data-agent-state="working"]')).toHaveText(w.working);
        for (const id of [ids.exited, ids.crashed, ids.limited]) {
          await expect(row(id).locator('[data-needs-you="true"]')).toHaveText(w.needsYou);
        }
        await expect(row(ids.working).locator('[data-needs-you]')).toHaveCount(0);
        await noSidewaysScroll(page);
        await row(ids.limited).scrollIntoViewIfNeeded();
        await shot('tasks');

        // The task page: the state, its reason and the screen lines.
        await open(page, `/tasks/${ids.limited}`);
        const section = page.locator('#task-agent-state');
        await expect(section).toHaveAttribute('data-agent-state', 'usage_limited');
        await expect(section).toHaveAttribute('data-needs-you', 'true');
        await expect(section.locator('[data-agent-state]')).toContainText(w.limited);
        await expect(page.locator('#task-agent-reason')).toContainText('usage limit reached; resets 12:26pm');
        const lines = page.locator('#task-agent-lines');
        await expect(lines).toContainText('Usage limit reached');
        const box = await lines.evaluate((el) => {
          const s = getComputedStyle(el);
          return { font: s.fontFamily, overflowY: s.overflowY, overflowX: s.overflowX, maxHeight: s.maxHeight, width: el.getBoundingClientRect().width };
        });
        expect(box.font).toMatch(/mono/i);
        expect(box.overflowX).toBe('auto');
        expect(box.maxHeight).not.toBe('none');
        expect(box.width).toBeLessThanOrEqual(size.viewport.width);
        await noSidewaysScroll(page);
        await section.scrollIntoViewIfNeeded();
        await shot('task-limited');
        await open(page, `/tasks/${ids.exited}`);
        await expect(page.locator('#task-agent-reason')).toHaveText('exited with code 3');
        await expect(page.locator('#task-agent-lines')).toContainText('Error: boom');
        await open(page, `/tasks/${ids.working}`);
        await expect(page.locator('#task-agent-state')).toHaveAttribute('data-needs-you', 'false');

        // /harness: the agents that need you, each linked to its task, and the
        // one count in the badge, the title and the phone menu.
        await open(page, '/harness');
        const needs = page.locator('#needs-you');
        await expect(needs.locator('h2')).toContainText(w.section);
        for (const id of [ids.exited, ids.crashed, ids.limited]) {
          await expect(needs.locator(`li[data-task-id="${id}"] a[href="/tasks/${id}"]`)).toBeVisible();
        }
        await expect(needs.locator(`li[data-task-id="${ids.working}"]`)).toHaveCount(0);
        await expect(needs.locator(`li[data-task-id="${ids.limited}"] [data-agent-state]`)).toContainText(w.limited);
        const total = await waitingTotal(request);
        expect(total).toBeGreaterThanOrEqual(3);
        await expect(page.locator('#nav-pending')).toHaveAttribute('data-count', String(total));
        await expect(page).toHaveTitle(new RegExp(`^\\(${total}\\) `));
        if (size.mobile) {
          await expect(page.locator('#nav-toggle-pending')).toHaveAttribute('data-count', String(total));
        }
        await noSidewaysScroll(page);
        await shot('harness');
        expect(errors).toEqual([]);
        await context.close();
      });
    }
  }

  test('the count follows an agent that no longer needs you, live', async ({ page, request }) => {
    await open(page, '/harness');
    const before = await waitingTotal(request);
    await expect(page.locator('#nav-pending')).toHaveAttribute('data-count', String(before));
    // A person takes the task over (attended): the agent no longer counts.
    await unattended(request, ids.crashed, false);
    await expect(page.locator(`#needs-you li[data-task-id="${ids.crashed}"]`)).toHaveCount(0);
    expect(await waitingTotal(request)).toBe(before - 1);
    await expect(page.locator('#nav-pending')).toHaveAttribute('data-count', String(before - 1));
    await expect(page).toHaveTitle(new RegExp(`^\\(${before - 1}\\) `));
  });
});
