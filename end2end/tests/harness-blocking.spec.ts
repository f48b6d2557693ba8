// "Most blocking first" on /harness (docs/morning-report.md) against a real
// server: three open questions with different blocking weights — one on a
// task with two live child agents, one on a task with one, one on a task
// alone — listed newest first by default, and in the morning report's
// rank (the core's, computed on the server) with `?sort=blocking`: the
// option is a chip kept in the URL. Screenshots at 390 px and 1280 px in
// English and Chinese (kept under the test's output).
import { test, expect, Page, APIRequestContext, Browser } from '@playwright/test';
import { join } from 'node:path';
import { api, createTask } from './api';
import { STORAGE_STATE } from '../global-setup';

const uid = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return errors;
}

async function open(page: Page, url: string) {
  await page.goto(url);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
}

async function ask(request: APIRequestContext, taskId: string, question: string) {
  const r = await api(request, 'POST', '/api/internal/harness/ask', { taskId, question });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
}

/** A child of `parent` whose agent runs (a live child agent). */
async function liveChild(request: APIRequestContext, parent: string, title: string): Promise<string> {
  const created = await api(request, 'POST', '/api/tasks', {
    title, parentTaskId: parent, agent: { provider: 'command', command: ['sleep', '300'], cwd: '/tmp' },
  });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  expect((await api(request, 'POST', `/api/tasks/${id}/start`)).status).toBe(200);
  await expect.poll(async () => (await api(request, 'GET', `/api/tasks/${id}`)).body.execution?.status,
    { timeout: 15_000 }).toBe('RUNNING');
  return id;
}

async function context(browser: Browser, width: number, locale: string) {
  const phone = width < 640;
  return browser.newContext({
    storageState: STORAGE_STATE, locale, viewport: { width, height: phone ? 844 : 900 },
    isMobile: phone, hasTouch: phone,
  });
}

test('most blocking first orders the open questions by what an answer unblocks', async ({ browser, request }, info) => {
  test.setTimeout(120_000);
  const run = uid();
  // Asked in this order, so newest first is alone, one child, two children.
  const two = await createTask(request, `Release ${run}`);
  const one = await createTask(request, `Migrate ${run}`);
  const alone = await createTask(request, `Docs ${run}`);
  const children = [
    await liveChild(request, two, `Build images ${run}`),
    await liveChild(request, two, `Smoke tests ${run}`),
    await liveChild(request, one, `Copy rows ${run}`),
  ];
  await ask(request, two, `Tag the release ${run}?`);
  await ask(request, one, `Run migration 12 ${run}?`);
  await ask(request, alone, `Publish the docs ${run}?`);
  const shots = join(info.project.outputDir, 'blocking-screens');
  try {
    for (const [width, locale] of [[1280, 'en-US'], [390, 'en-US'], [1280, 'zh-CN'], [390, 'zh-CN']] as const) {
      const ctx = await context(browser, width, locale);
      const page = await ctx.newPage();
      const errors = watchErrors(page);
      const zh = locale === 'zh-CN';
      const rows = page.locator('table.harness tbody tr[data-task-id]');
      // The default is unchanged: newest first.
      await open(page, `/harness?view=pending&q=${run}`);
      await expect(rows).toHaveCount(3);
      expect(await rows.evaluateAll((r) => r.map((x) => x.getAttribute('data-task-id')))).toEqual([alone, one, two]);
      const chip = page.locator('#sort-blocking');
      await expect(chip).toHaveText(zh ? /最阻塞的优先/ : /Most blocking first/);
      await expect(chip).toHaveAttribute('data-on', 'false');
      // On: the report's rank — two live children, one, none.
      await chip.click();
      await expect(page).toHaveURL(/sort=blocking/);
      await expect(page).toHaveURL(new RegExp(`q=${run}`));
      await expect(chip).toHaveAttribute('data-on', 'true');
      await expect.poll(async () => rows.evaluateAll((r) => r.map((x) => x.getAttribute('data-task-id'))))
        .toEqual([two, one, alone]);
      await page.screenshot({ path: join(shots, `blocking-${locale}-${width}.png`), fullPage: true });
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `the page is ${overflow} px wider than the window`).toBeLessThanOrEqual(0);
      // Loaded as such (server-rendered from the URL), and a live update keeps the order.
      await open(page, `/harness?view=pending&q=${run}&sort=blocking`);
      await expect(chip).toHaveAttribute('data-on', 'true');
      expect(await rows.evaluateAll((r) => r.map((x) => x.getAttribute('data-task-id')))).toEqual([two, one, alone]);
      // Off again: newest first.
      await chip.click();
      await expect(page).not.toHaveURL(/sort=blocking/);
      await expect.poll(async () => rows.evaluateAll((r) => r.map((x) => x.getAttribute('data-task-id'))))
        .toEqual([alone, one, two]);
      expect(errors).toEqual([]);
      await ctx.close();
    }
    // The same order as the report's "what waits for you".
    const report = (await api(request, 'GET', '/api/report')).body;
    const mine = report.waiting.filter((w: { taskId: string }) => [two, one, alone].includes(w.taskId))
      .map((w: { taskId: string }) => w.taskId);
    expect(mine).toEqual([two, one, alone]);
  } finally {
    for (const c of children) await api(request, 'POST', `/api/tasks/${c}/stop`);
  }
});
