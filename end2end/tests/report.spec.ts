// The morning report on the web (/report) against a real server: a night
// seeded through REST (two questions with options, a held approval, a
// finished task and a failed one), the page at 390 px and 1280 px in English
// and Chinese (screenshots kept under the test's output), two items answered
// in the batch box with Ctrl+Enter, the result lines and the answers checked
// through REST. And Ctrl+Enter in the Inbox row's own answer box sends.
import { test, expect, Page, APIRequestContext, Browser } from '@playwright/test';
import { join } from 'node:path';
import { api, createTask } from './api';
import AxeBuilder from '@axe-core/playwright';
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

async function ask(request: APIRequestContext, taskId: string, body: object): Promise<string> {
  const r = await api(request, 'POST', '/api/internal/harness/ask', { taskId, ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.requestId;
}

async function message(request: APIRequestContext, taskId: string) {
  const r = await api(request, 'GET', `/api/harness/messages?view=all&taskId=${taskId}`);
  expect(r.status).toBe(200);
  return r.body.rows[0];
}

/** A task whose agent runs `script` to its end. */
async function ran(request: APIRequestContext, title: string, script: string, status: string) {
  const created = await api(request, 'POST', '/api/tasks', {
    title, agent: { provider: 'command', command: ['sh', '-c', script], cwd: '/tmp' },
  });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  expect((await api(request, 'POST', `/api/tasks/${id}/start`)).status).toBe(200);
  await expect.poll(async () => (await api(request, 'GET', `/api/tasks/${id}`)).body.execution?.status,
    { timeout: 15_000 }).toBe(status);
  return id;
}

interface Night { run: string; db: string; deploy: string; approvalTask: string; approvalId: string; done: string; failed: string }

async function seed(request: APIRequestContext): Promise<Night> {
  const run = uid();
  const db = await createTask(request, `Pick a database ${run}`);
  await ask(request, db, { question: 'Which database?', options: [{ label: 'Postgres' }, { label: 'SQLite' }, { label: 'None' }] });
  const deploy = await createTask(request, `Deploy window ${run}`);
  await ask(request, deploy, { question: 'When may I deploy?', options: [{ label: 'Now' }, { label: 'Friday' }] });
  const parent = await api(request, 'POST', '/api/tasks', { title: `Release ${run}`, agent: { provider: 'command', command: ['true'] } });
  expect(parent.status).toBe(201);
  const child = await api(request, 'POST', '/api/tasks', {
    title: `Push the tag ${run}`, parentTaskId: parent.body.id, agent: { provider: 'command', command: ['true'] },
  });
  expect(child.status).toBe(201);
  const held = await api(request, 'POST', '/api/internal/approvals/check', {
    taskId: child.body.id, tool: 'Bash', input: { command: 'git push origin v1.2.0' }, cwd: '/srv/repo', waitSeconds: 0,
  });
  expect(held.status, JSON.stringify(held.body)).toBe(200);
  expect(held.body.waiting).toBe(true);
  const done = await ran(request, `Nightly build ${run}`, 'echo built', 'COMPLETED');
  const note = await api(request, 'POST', '/api/internal/harness/notify', { taskId: done, message: 'built 3 targets' });
  expect(note.status, JSON.stringify(note.body)).toBe(200);
  const failed = await ran(request, `Flaky check ${run}`, 'echo boom; exit 3', 'FAILED');
  return { run, db, deploy, approvalTask: child.body.id, approvalId: held.body.approvalId, done, failed };
}

async function shoot(page: Page, dir: string, name: string) {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
  // No serious or critical accessibility problem (contrast, names, roles).
  const axe = await new AxeBuilder({ page }).analyze();
  const serious = axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')}`);
  expect(serious, `${name}: ${serious.join('\n')}`).toEqual([]);
  // Nothing wider than the window (no sideways scrolling).
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, `${name}: the page is ${overflow} px wider than the window`).toBeLessThanOrEqual(0);
}

async function context(browser: Browser, width: number, locale: string) {
  const phone = width < 640;
  return browser.newContext({
    storageState: STORAGE_STATE, locale, viewport: { width, height: phone ? 844 : 900 },
    isMobile: phone, hasTouch: phone,
  });
}

test('the report tells the night and one box answers several items', async ({ browser, request }, info) => {
  test.setTimeout(180_000);
  const night = await seed(request);
  const shots = join(info.project.outputDir, 'report-screens');
  for (const [width, locale] of [[1280, 'en-US'], [390, 'en-US'], [1280, 'zh-CN'], [390, 'zh-CN']] as const) {
    const ctx = await context(browser, width, locale);
    const page = await ctx.newPage();
    const errors = watchErrors(page);
    await open(page, '/report');
    const zh = locale === 'zh-CN';
    await expect(page.locator('h1')).toHaveText(zh ? '报告' : 'Report');
    // The night: per task what ran and how it ended, each linking to its page.
    const done = page.locator(`article.report-task[data-task-id="${night.done}"]`);
    await expect(done.locator('.report-run[data-status="COMPLETED"]')).toContainText(zh ? '已完成' : 'finished');
    await expect(done.locator('h4 a')).toHaveAttribute('href', `/tasks/${night.done}`);
    const failed = page.locator(`article.report-task[data-task-id="${night.failed}"]`);
    await expect(failed.locator('.report-run[data-status="FAILED"]')).toContainText(zh ? '退出码 3' : 'exit 3');
    await expect(done.locator('.report-progress')).toContainText('built 3 targets');
    await expect(page.locator(`article.report-task[data-task-id="${night.db}"] .report-asked[data-state="OPEN"]`))
      .toContainText('Which database?');
    // What waits: numbered, ranked, each with a link to its task.
    const db = page.locator(`li.report-item[data-task-id="${night.db}"]`);
    await expect(db.locator('.report-options li')).toHaveText(['1 Postgres', '2 SQLite', '3 None']);
    await expect(db.locator('a.report-item-task')).toHaveAttribute('href', `/tasks/${night.db}`);
    await expect(page.locator(`li.report-item[data-task-id="${night.approvalTask}"]`)).toHaveAttribute('data-kind', 'approval');
    // The waiting count is the one count, and it links to the Inbox.
    const waiting = (await api(request, 'GET', '/api/waiting')).body;
    await expect(page.locator('#report-waiting-count')).toHaveText(String(waiting.total));
    await expect(page.locator('#report-waiting-count')).toHaveAttribute('href', '/harness');
    await shoot(page, shots, `report-${locale}-${width}`);
    if (width < 640) {
      // The phone menu has the entry.
      await page.locator('#nav-toggle').click();
      await expect(page.locator('#main-nav a[href="/report"]')).toBeVisible();
      await shoot(page, shots, `report-${locale}-${width}-menu`);
    } else {
      await expect(page.locator('#main-nav a[href="/report"]')).toBeVisible();
    }
    expect(errors).toEqual([]);
    await ctx.close();
  }

  // Two items in one reply, sent with Ctrl+Enter, plus one unknown number.
  const ctx = await context(browser, 1280, 'en-US');
  const page = await ctx.newPage();
  const errors = watchErrors(page);
  await open(page, '/report');
  const waiting = (await api(request, 'GET', '/api/waiting')).body;
  const number = async (taskId: string) =>
    Number(await page.locator(`li.report-item[data-task-id="${taskId}"]`).getAttribute('data-number'));
  const nDb = await number(night.db);
  const nApproval = await number(night.approvalTask);
  const box = page.locator('#report-reply-text');
  await box.fill(`${nDb} 2 · ${nApproval} approve · 99 approve`);
  await box.press('Control+Enter');
  const taken = page.locator('#report-taken li');
  await expect(taken).toHaveCount(2);
  await expect(page.locator(`#report-taken li[data-number="${nDb}"]`)).toBeVisible();
  await expect(page.locator(`#report-taken li[data-number="${nApproval}"]`)).toBeVisible();
  await expect(page.locator('#report-refused li[data-number="99"]')).toBeVisible();
  // The answered items are marked; the box is empty again.
  await expect(page.locator(`li.report-item[data-task-id="${night.db}"]`)).toHaveClass(/\bdone\b/);
  await expect(box).toHaveValue('');
  // The count is what still waits: one of the three.
  await expect(page.locator('#report-waiting-count')).toHaveText(String(Number(waiting.total) - 2));
  await shoot(page, shots, 'report-answered-en-US-1280');
  // Through REST: the question took its option, the approval is approved,
  // the other question still waits.
  const m = await message(request, night.db);
  expect(m.state).toBe('ANSWERED');
  expect(m.replyText).toBe('SQLite');
  const a = await api(request, 'GET', `/api/approvals/${night.approvalId}`);
  expect(a.body.state).toBe('APPROVED');
  expect((await message(request, night.deploy)).state).toBe('OPEN');
  // The same reply again takes nothing twice.
  await box.fill(`${nDb} 1`);
  await box.press('Control+Enter');
  await expect(page.locator(`#report-refused li[data-number="${nDb}"]`)).toBeVisible();
  expect((await message(request, night.db)).replyText).toBe('SQLite');
  expect(errors).toEqual([]);
  await ctx.close();

  // A fresh report: the answered question carries its receipt line, in the
  // page's language (who answered where, how fast, what was typed).
  for (const [width, locale] of [[390, 'zh-CN'], [1280, 'en-US']] as const) {
    const c = await context(browser, width, locale);
    const p = await c.newPage();
    const errs = watchErrors(p);
    await open(p, '/report');
    const receipt = p.locator(`.report-asked[data-ask-id="${m.id}"] .report-receipt`);
    await expect(receipt).toContainText(locale === 'zh-CN' ? '回执：在网页上回答' : 'receipt: answered on the web');
    await shoot(p, shots, `report-receipt-${locale}-${width}`);
    expect(errs).toEqual([]);
    await c.close();
  }
  // The same through the API, in either language.
  const zhReport = await api(request, 'GET', '/api/report?lang=zh');
  expect(zhReport.status).toBe(200);
  expect(zhReport.body.text).toContain('回执：在网页上回答');
  expect((await api(request, 'GET', '/api/report?lang=fr')).status).toBe(400);
});

test('Ctrl+Enter in the Inbox row\'s own box sends the answer', async ({ page, request }) => {
  const errors = watchErrors(page);
  const title = `Row key ${uid()}`;
  const taskId = await createTask(request, title);
  await ask(request, taskId, { question: 'Go on?' });
  await open(page, `/harness?view=all&q=${encodeURIComponent(title)}`);
  await expect(page.locator('header.topnav')).toHaveAttribute('data-live', 'open');
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  const box = row.locator('form.inline-reply textarea');
  await box.fill('yes, go on');
  await box.press('Control+Enter');
  await expect(row.locator('.badge')).toHaveText('answered', { timeout: 10_000 });
  const m = await message(request, taskId);
  expect(m.state).toBe('ANSWERED');
  expect(m.replyText).toBe('yes, go on');
  expect(errors).toEqual([]);
});

test('Ctrl+Enter in the task page\'s answer box sends the answer', async ({ page, request }) => {
  const errors = watchErrors(page);
  const taskId = await createTask(request, `Page key ${uid()}`);
  await ask(request, taskId, { question: 'Which branch?' });
  await open(page, `/tasks/${taskId}`);
  const box = page.locator('#task-reply-text');
  await box.fill('main');
  await box.press('Control+Enter');
  await expect.poll(async () => (await message(request, taskId)).state, { timeout: 10_000 }).toBe('ANSWERED');
  expect((await message(request, taskId)).replyText).toBe('main');
  expect(errors).toEqual([]);
});
