// the tests look at the page as a person does. axe-core (contrast
// included) on every page in the states a person meets — a question with
// options, the open question dialog, a search without a match, settings with
// field errors, the login and logout pages, a stopped and a failed task, the
// 404 pages — in light and dark, at desktop (1280 px) and phone (390 px)
// width. A full-page screenshot of every state is saved under
// test-results/screens/<scheme>-<width>/ for a reviewer to look at.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, expect, Page, APIRequestContext, Browser, BrowserContextOptions } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { api } from './api';
import { STORAGE_STATE } from '../global-setup';

const RUN = `A11y${Date.now().toString(36)}`;
const VIEWPORTS = [
  ['desktop', { width: 1280, height: 800 }],
  ['phone', { width: 390, height: 844 }],
] as const;
const QUESTION = {
  question: 'Which database should the **orders service** use?',
  options: [
    { label: 'Postgres', description: 'a database server; needs a running service' },
    { label: 'SQLite', description: 'one file next to the service' },
    { label: 'Keep both behind a flag' },
  ],
  default: 'SQLite',
  deadline: 3600,
  urgency: 'high',
};

type Fixture = { asking: string; stopped: string; failed: string; missing: string };
let fx: Fixture;

async function task(request: APIRequestContext, title: string, line: string): Promise<string> {
  const r = await api(request, 'POST', '/api/tasks', {
    title: `${title} ${RUN}`, agent: { provider: 'command', command: ['sh', '-c', line], cwd: '/tmp' },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

async function runState(request: APIRequestContext, id: string): Promise<string | undefined> {
  return (await api(request, 'GET', `/api/tasks/${id}`)).body?.execution?.status;
}

test.beforeAll(async ({ request }) => {
  const asking = await task(request, 'Choose the orders database', 'echo waiting; exec sleep 600');
  const ask = await api(request, 'POST', '/api/internal/harness/ask', { taskId: asking, ...QUESTION });
  expect(ask.status, JSON.stringify(ask.body)).toBe(200);
  const stopped = await task(request, 'Stopped migration', 'echo migrating the orders table; exec sleep 600');
  expect((await api(request, 'POST', `/api/tasks/${stopped}/start`)).status).toBe(200);
  await expect.poll(() => runState(request, stopped), { timeout: 10_000 }).toBe('RUNNING');
  expect((await api(request, 'POST', `/api/tasks/${stopped}/stop`)).status).toBe(200);
  await expect.poll(() => runState(request, stopped), { timeout: 10_000 }).toBe('STOPPED');
  const failed = await task(request, 'Failing build', 'echo compiling; echo "error: linker failed" >&2; exit 3');
  expect((await api(request, 'POST', `/api/tasks/${failed}/start`)).status).toBe(200);
  await expect.poll(() => runState(request, failed), { timeout: 10_000 }).toBe('FAILED');
  // A well-formed id of no task.
  fx = { asking, stopped, failed, missing: 'c' + 'z'.repeat(24) };
});

/** Collects serious and critical axe violations and saves a screenshot. */
class Looker {
  problems: string[] = [];
  constructor(private dir: string) { mkdirSync(dir, { recursive: true }); }

  async look(page: Page, state: string) {
    const results = await new AxeBuilder({ page })
      // The terminal draws what the agent prints, in the agent's colours.
      .exclude('.ht-term')
      .analyze();
    for (const v of results.violations) {
      if (v.impact === 'serious' || v.impact === 'critical') {
        const nodes = v.nodes.map((n) => `${n.target.join(' ')}${n.failureSummary ? ` [${n.failureSummary.split('\n').slice(1, 2).join('')}]` : ''}`);
        this.problems.push(`${state}: ${v.id} (${v.impact}) ${v.help}: ${nodes.slice(0, 5).join(' | ')}`);
      }
    }
    // The page never scrolls sideways on a phone.
    const wide = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth + 1);
    if (wide) this.problems.push(`${state}: the page scrolls sideways`);
    await page.screenshot({ path: join(this.dir, `${state}.png`), fullPage: true });
  }
}

async function open(page: Page, path: string, status = 200) {
  const response = await page.goto(path);
  expect(response?.status(), `${path} answers ${status}`).toBe(status);
  // The login and logout pages are plain HTML (no app, no script).
  if (!/^\/log(in|out)/.test(path)) await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
}

async function context(browser: Browser, scheme: 'light' | 'dark', viewport: { width: number; height: number }, loggedIn = true) {
  const options: BrowserContextOptions = {
    viewport, colorScheme: scheme,
    storageState: loggedIn ? STORAGE_STATE : { cookies: [], origins: [] },
  };
  if (viewport.width < 640) Object.assign(options, { isMobile: true, hasTouch: true });
  return browser.newContext(options);
}

for (const scheme of ['light', 'dark'] as const) {
  for (const [name, viewport] of VIEWPORTS) {
    test(`axe in every state: no serious violations (${scheme}, ${name} ${viewport.width} px)`, async ({ browser }, info) => {
      test.setTimeout(240_000);
      const looker = new Looker(join(info.project.outputDir, 'screens', `${scheme}-${viewport.width}`));
      const ctx = await context(browser, scheme, viewport);
      const page = await ctx.newPage();

      await open(page, '/');
      await looker.look(page, 'home');

      // A question with options, in the list of pending questions.
      await open(page, `/harness?q=${RUN}`);
      const row = page.locator(`tr[data-task-id="${fx.asking}"]`);
      await expect(row.locator('.choices .choice')).toHaveCount(3);
      await looker.look(page, 'harness-question-with-options');

      // The question dialog, open.
      await row.locator('button.handle').click();
      const dialog = page.locator('#detail-dialog');
      await expect(dialog).toHaveAttribute('open', '');
      await expect(dialog.locator('.choices .choice')).toHaveCount(3);
      await looker.look(page, 'harness-question-dialog');
      await page.keyboard.press('Escape');
      await expect(dialog).not.toHaveAttribute('open', '');

      // A search without a match.
      await open(page, `/harness?view=all&q=${RUN}-no-such-thing`);
      await looker.look(page, 'harness-search-no-match');

      await open(page, `/tasks`);
      await looker.look(page, 'tasks');
      await open(page, `/tasks/${fx.asking}`);
      await looker.look(page, 'task-question-with-options');
      await open(page, `/tasks/${fx.stopped}`);
      await expect(page.locator('.page-head [data-run-state]')).toHaveText('stopped');
      // Stop keeps the terminal's last output, like a failed run.
      await expect(page.locator('#terminal .ht-term')).toContainText('migrating the orders table', { timeout: 10_000 });
      await looker.look(page, 'task-stopped');
      await open(page, `/tasks/${fx.failed}`);
      await expect(page.locator('.page-head [data-run-state]')).toContainText('failed');
      await expect(page.locator('#terminal .ht-term')).toContainText('linker failed', { timeout: 10_000 });
      await looker.look(page, 'task-failed');

      // 404: a missing task, a malformed task id, an unknown address.
      await open(page, `/tasks/${fx.missing}`, 404);
      await expect(page.locator('#not-found')).toHaveCount(1);
      await looker.look(page, '404-task');
      await open(page, `/tasks/not-a-task-id`, 404);
      await expect(page.locator('#not-found')).toHaveCount(1);
      await open(page, `/no-such-page-${RUN}`, 404);
      await expect(page.locator('#not-found')).toHaveCount(1);
      await looker.look(page, '404-page');

      await open(page, '/projects');
      await looker.look(page, 'projects');
      await open(page, '/analytics');
      await looker.look(page, 'analytics');

      // Settings, then with a field error: an OpenClaw channel without its platform.
      await open(page, '/settings');
      await looker.look(page, 'settings');
      await page.selectOption('#target-gateway', 'openclaw');
      await page.fill('#target-dest', '@someone');
      await page.locator('#add-target button[type=submit]').click();
      await expect(page.locator('#target-downstream-error')).toBeVisible();
      await looker.look(page, 'settings-field-error');

      // The logout page (logged in), then the login page (logged out).
      await open(page, '/logout');
      await looker.look(page, 'logout');
      await ctx.close();
      const anonymous = await context(browser, scheme, viewport, false);
      const login = await anonymous.newPage();
      await open(login, '/login');
      await expect(login.locator('html')).toHaveAttribute('lang', 'en');
      await looker.look(login, 'login');
      // A wrong token: the alert (once per scheme: failed logins are throttled per address).
      if (name === 'desktop') {
        await login.fill('#token', 'not-the-token');
        await login.locator('button[type=submit]').click();
        await expect(login.getByRole('alert')).toBeVisible();
        await looker.look(login, 'login-wrong-token');
      }
      await anonymous.close();

      expect(looker.problems, looker.problems.join('\n')).toEqual([]);
    });
  }
}

test('phone: answer a question by tapping the option you can read', async ({ browser, request }) => {
  const ctx = await browser.newContext({
    storageState: STORAGE_STATE, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true,
  });
  const page = await ctx.newPage();
  const id = await task(request, 'Tap to answer', 'exec sleep 600');
  const ask = await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, ...QUESTION });
  expect(ask.status).toBe(200);
  await open(page, `/harness?view=all&q=${encodeURIComponent('Tap to answer ' + RUN)}`);
  // Found by the text a person reads, not by a data attribute.
  const option = page.getByRole('button', { name: /SQLite/ });
  await expect(option).toBeVisible();
  await expect(option).toContainText('SQLite');
  // Readable: the label's colour differs clearly from the button's background.
  const [fg, bg] = await option.evaluate((el) => {
    const s = getComputedStyle(el);
    return [s.color, s.backgroundColor];
  });
  expect(fg).not.toBe(bg);
  // A touch target of at least 44 px.
  const box = await option.boundingBox();
  expect(box?.height ?? 0).toBeGreaterThanOrEqual(44);
  await option.tap();
  // A moment to take it back, saying what will be sent; then it is sent.
  const row = page.locator(`tr[data-task-id="${id}"]`);
  await expect(row.locator('.choice-armed')).toContainText('SQLite');
  await page.screenshot({ path: test.info().outputPath('phone-tapped-undo-window.png') });
  await expect(row.locator('.badge')).toHaveText('answered', { timeout: 10_000 });
  const m = await api(request, 'GET', `/api/harness/messages?view=all&taskId=${id}`);
  expect(m.body.rows[0].state).toBe('ANSWERED');
  expect(m.body.rows[0].replyText).toBe('SQLite');
  await ctx.close();
});

test('a one-tap answer can be taken back during its undo window', async ({ page, request }) => {
  const id = await task(request, 'Undo an answer', 'exec sleep 600');
  expect((await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, ...QUESTION })).status).toBe(200);
  await open(page, `/harness?view=all&q=${encodeURIComponent('Undo an answer ' + RUN)}`);
  const row = page.locator(`tr[data-task-id="${id}"]`);
  await row.getByRole('button', { name: /Postgres/ }).click();
  await row.getByRole('button', { name: 'Undo' }).click();
  await expect(row.locator('.choice-armed')).toHaveCount(0);
  await expect(row.getByRole('button', { name: /Postgres/ })).toBeVisible();
  // Well past the window: nothing was sent.
  await page.waitForTimeout(4000);
  const m = await api(request, 'GET', `/api/harness/messages?view=all&taskId=${id}`);
  expect(m.body.rows[0].state).toBe('OPEN');
});

test('Chinese (Accept-Language): the pages and their states are translated and pass axe', async ({ browser, request }, info) => {
  test.setTimeout(120_000);
  const looker = new Looker(join(info.project.outputDir, 'screens', 'zh-light-390'));
  const label = `手机 ${RUN}`;
  const added = await api(request, 'POST', '/api/settings/notify-targets/add', {
    label, gateway: 'hermes', downstream: 'telegram', dest: '4242', scope: 'unattended',
  });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  // Removed again whatever happens: other tests expect no channel.
  try {
  const ctx = await browser.newContext({
    storageState: STORAGE_STATE, locale: 'zh-CN', viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true,
  });
  const page = await ctx.newPage();
  await open(page, '/settings');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  const row = page.locator('#targets li', { hasText: label });
  // The scope in words of the page's language, never the stored "unattended".
  await expect(row).toContainText('无人值守任务');
  await expect(row).not.toContainText('unattended');
  await looker.look(page, 'settings');
  await open(page, `/harness?q=${RUN}`);
  await expect(page.locator('h1')).toHaveText('收件箱');
  await looker.look(page, 'harness-question-with-options');
  await open(page, `/tasks/${fx.asking}`);
  await looker.look(page, 'task-question-with-options');
  await open(page, `/no-such-page-${RUN}`, 404);
  await expect(page.locator('#not-found h1')).toHaveText('页面不存在');
  await looker.look(page, '404-page');
  await ctx.close();
  const anonymous = await browser.newContext({ storageState: { cookies: [], origins: [] }, locale: 'zh-CN', viewport: { width: 390, height: 844 } });
  const login = await anonymous.newPage();
  await open(login, '/login');
  await expect(login.locator('h1')).toHaveText('登录');
  await looker.look(login, 'login');
  await anonymous.close();
  } finally {
    expect((await api(request, 'DELETE', `/api/settings/notify-targets/${added.body.id}`)).status).toBeLessThan(300);
  }
  expect(looker.problems, looker.problems.join('\n')).toEqual([]);
});
