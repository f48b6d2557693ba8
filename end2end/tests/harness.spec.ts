// The /harness notification center and the task pages in a real browser
// against a real server (scripts/e2e.sh): live updates over SSE, inline and
// dialog replies, ignore, dismiss, views, search, keyset paging, language,
// no-JavaScript use, task pages. Every test fails on a browser console error.
import { test, expect, Page, APIRequestContext } from '@playwright/test';
import { api, createTask } from './api';

const uid = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

async function ask(request: APIRequestContext, taskId: string, question: string): Promise<string> {
  const r = await api(request, 'POST', '/api/internal/harness/ask', { taskId, question });
  expect(r.status).toBe(200);
  return r.body.requestId;
}

async function notify(request: APIRequestContext, taskId: string, message: string) {
  const r = await api(request, 'POST', '/api/internal/harness/notify', { taskId, message });
  expect(r.status).toBe(200);
}

async function messages(request: APIRequestContext, taskId: string, view = 'all') {
  const r = await api(request, 'GET', `/api/harness/messages?view=${view}&taskId=${taskId}`);
  expect(r.status).toBe(200);
  return r.body.rows as Array<{ id: string; state: string; replyText: string | null; content: string }>;
}

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return errors;
}

/** Open a page and wait until it is hydrated and the live stream is connected. */
async function openLive(page: Page, url: string) {
  await page.goto(url);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('header.topnav')).toHaveAttribute('data-live', 'open');
}

test('columns, SSR content and a live ask appearing without reload', async ({ page, request }) => {
  const errors = watchErrors(page);
  const title = `Live ${uid()}`;
  const taskId = await createTask(request, title);

  await openLive(page, '/harness');
  const headers = await page.locator('table.harness thead th').allTextContents();
  expect(headers).toEqual(['Workspace', 'Project', 'Task', 'Content', 'Sent at', 'Reply', 'Replied at', 'Status', 'Actions']);
  const before = Number(await page.locator('#nav-pending').getAttribute('data-count'));

  const navigations: string[] = [];
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations.push(f.url()); });
  const question = `Which port should the ${title} service use?\nLine two\nLine three\nLine four`;
  const started = Date.now();
  await ask(request, taskId, question);
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  await expect(row).toBeVisible({ timeout: 1000 });
  expect(Date.now() - started).toBeLessThan(1000);
  await expect(row.locator('td.content .clamp')).toHaveAttribute('title', question);
  await expect(row.locator('td.task .clamp')).toHaveAttribute('title', title);
  await expect(row.locator('.badge')).toHaveText('pending');
  await expect(row.locator('td.time time').first()).toHaveText('just now');
  await expect(row.locator('td.time time').first()).toHaveAttribute('title', /\d/);
  await expect(page.locator('#nav-pending')).toHaveAttribute('data-count', String(before + 1));
  await expect(page).toHaveTitle(`(${before + 1}) Inbox — Harness`);
  expect(navigations).toEqual([]);

  // The same row is in the server-rendered HTML (no JavaScript needed to read).
  const html = await (await request.get('/harness')).text();
  expect(html).toContain(`data-task-id="${taskId}"`);
  expect(errors).toEqual([]);
});

test('the list shows a markdown question as text, the dialog renders it', async ({ page, request }) => {
  const errors = watchErrors(page);
  const title = `Markdown ${uid()}`;
  const taskId = await createTask(request, title);
  await ask(request, taskId, 'Deploy the **orders service** to `prod`?\n\n- tests pass\n- [changelog](https://example.com/c)');
  // The dialog body's code (its own wasm chunk) is fetched when the person
  // reaches for the table, not with the page.
  const wasm: string[] = [];
  page.on('request', (r) => { if (r.url().endsWith('.wasm')) wasm.push(new URL(r.url()).pathname); });
  await openLive(page, `/harness?q=${encodeURIComponent(title)}`);
  await page.waitForTimeout(300);
  expect(wasm.filter((w) => w.includes('_split_dialog_body_'))).toEqual([]);
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  const preview = 'Deploy the orders service to prod?\n• tests pass\n• changelog';
  await expect(row.locator('td.content .clamp')).toHaveAttribute('title', preview);
  expect(await row.locator('td.content .clamp').textContent()).toBe(preview);
  await row.locator('button.details').click();
  await expect(page.locator('#detail-sent strong')).toHaveText('orders service');
  await expect(page.locator('#detail-sent a')).toHaveAttribute('href', 'https://example.com/c');
  expect(wasm.filter((w) => w.includes('_split_dialog_body_'))).toHaveLength(1);
  expect(errors).toEqual([]);
});

test('inline reply marks the ask answered; the API agrees', async ({ page, request }) => {
  const errors = watchErrors(page);
  const taskId = await createTask(request, `Inline ${uid()}`);
  await ask(request, taskId, 'Tabs or spaces?');
  await openLive(page, '/harness?view=all');
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  await row.locator('textarea[name="text"]').fill('Spaces');
  await row.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('#reply-status')).toContainText('Answered');
  await expect(row.locator('.badge')).toHaveText('answered');
  await expect(row.locator('td.reply .clamp')).toHaveText('Spaces');
  const [m] = await messages(request, taskId);
  expect(m.state).toBe('ANSWERED');
  expect(m.replyText).toBe('Spaces');
  const pending = await api(request, 'GET', `/api/internal/harness/pending?taskId=${taskId}`);
  expect(pending.body.pending).toBe(false);
  expect(errors).toEqual([]);
});

test('Ctrl+Enter in the row\'s own box sends it; Enter alone adds a line', async ({ page, request }) => {
  const errors = watchErrors(page);
  const taskId = await createTask(request, `Row keys ${uid()}`);
  await ask(request, taskId, 'Which port?');
  await openLive(page, '/harness?view=all');
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  const box = row.locator('textarea[name="text"]');
  await box.fill('8080');
  // Enter alone is a new line in the box: nothing is sent.
  await box.press('Enter');
  await box.pressSequentially('then 8081');
  await expect(box).toHaveValue('8080\nthen 8081');
  await expect(row.locator('.badge')).toHaveText('pending');
  expect((await messages(request, taskId))[0].state).toBe('OPEN');
  await box.press('Control+Enter');
  await expect(page.locator('#reply-status')).toContainText('Answered');
  await expect(row.locator('.badge')).toHaveText('answered');
  const [m] = await messages(request, taskId);
  expect(m.state).toBe('ANSWERED');
  expect(m.replyText).toBe('8080\nthen 8081');
  expect(errors).toEqual([]);
});

test('dialog: details, draft kept, keyboard, Ctrl+Enter sends, answered is read-only', async ({ page, request }) => {
  const errors = watchErrors(page);
  const title = `Dialog ${uid()}`;
  const taskId = await createTask(request, title);
  await ask(request, taskId, 'Deploy now or wait?');
  await openLive(page, `/harness?view=all&q=${encodeURIComponent(title)}`);
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  const dialog = page.locator('#detail-dialog');

  // Keyboard: focus the row, Enter opens the detail.
  await row.focus();
  await page.keyboard.press('Enter');
  await expect(dialog).toBeVisible();
  await expect(dialog.locator('#detail-title')).toHaveText(title);
  await expect(dialog.locator('#detail-sub')).toContainText('— / —');
  await expect(dialog.locator('#detail-sub')).toContainText('question');
  await expect(dialog.locator('#detail-sent')).toHaveText('Deploy now or wait?');
  await expect(dialog.locator('.badge')).toHaveText('pending');

  // Focus stays inside the dialog.
  for (let i = 0; i < 8; i++) {
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => !!document.activeElement?.closest('#detail-dialog'))).toBe(true);
  }

  // A draft survives closing (Esc) and reopening.
  await dialog.locator('#detail-reply-text').fill('Wait until Monday');
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
  await row.getByRole('button', { name: 'Answer', exact: true }).click();
  await expect(dialog).toBeVisible();
  await expect(dialog.locator('#detail-reply-text')).toBeFocused();
  await expect(dialog.locator('#detail-reply-text')).toHaveValue('Wait until Monday');

  // Ctrl+Enter sends; the dialog closes and the result is shown.
  await page.keyboard.press('Control+Enter');
  await expect(dialog).toBeHidden();
  await expect(page.locator('#reply-status')).toContainText('Answered');
  await expect(row.locator('.badge')).toHaveText('answered');

  // Answered: read-only.
  await row.getByRole('button', { name: 'Details' }).click();
  await expect(dialog.locator('#detail-reply')).toHaveText('Wait until Monday');
  await expect(dialog.locator('textarea')).toHaveCount(0);
  await page.keyboard.press('Escape');
  const [m] = await messages(request, taskId);
  expect(m.replyText).toBe('Wait until Monday');
  expect(errors).toEqual([]);
});

test('ignore an ask and dismiss a notify line', async ({ page, request }) => {
  const errors = watchErrors(page);
  const title = `Ignore ${uid()}`;
  const taskId = await createTask(request, title);
  await ask(request, taskId, 'Should I ignore this?');
  await notify(request, taskId, 'Progress: 50%');
  await openLive(page, `/harness?view=all&q=${encodeURIComponent(title)}`);
  const rows = page.locator('table.harness tbody tr');
  await expect(rows).toHaveCount(2);

  const askRow = page.locator('tr[data-kind="ask"]');
  await askRow.getByRole('button', { name: 'Answer', exact: true }).click();
  await page.locator('#detail-ignore').click();
  await expect(page.locator('#reply-status')).toContainText('Ignored');
  await expect(askRow.locator('.badge')).toHaveText('ignored');
  expect((await messages(request, taskId)).find((m) => m.content === 'Should I ignore this?')?.state).toBe('IGNORED');

  const noteRow = page.locator('tr[data-kind="notify"]');
  await expect(noteRow.locator('.badge')).toHaveText('update');
  await noteRow.getByRole('button', { name: 'Dismiss' }).click();
  await expect(page.locator('#reply-status')).toContainText('Dismissed');
  await expect(noteRow).toHaveCount(0);
  await expect(rows).toHaveCount(1);
  expect((await messages(request, taskId)).map((m) => m.content)).toEqual(['Should I ignore this?']);
  expect(errors).toEqual([]);
});

test('views and search filter; the URL carries them', async ({ page, request }) => {
  const errors = watchErrors(page);
  const tag = uid();
  const a = await createTask(request, `Views A ${tag}`);
  const b = await createTask(request, `Views B ${tag}`);
  await ask(request, a, `alpha question ${tag}`);
  await ask(request, b, `beta question ${tag}`);
  await api(request, 'POST', '/api/internal/harness/reply', { taskId: b, text: `beta answer ${tag}` });
  await notify(request, a, `gamma progress ${tag}`);

  await openLive(page, `/harness?view=all&q=${tag}`);
  const rows = page.locator('table.harness tbody tr');
  await expect(rows).toHaveCount(3);
  await page.locator('a.chip[data-view="pending"]').click();
  await expect(page).toHaveURL(new RegExp(`view=pending&q=${tag}`));
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('alpha question');
  await page.locator('a.chip[data-view="answered"]').click();
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('beta answer');
  await page.locator('a.chip[data-view="all"]').click();
  await expect(rows).toHaveCount(3);

  // Search over the reply text, then over the task title.
  await page.locator('#harness-q').fill(`beta answer ${tag}`);
  await page.locator('#harness-q').press('Enter');
  await expect(page).toHaveURL(/view=all&q=beta/);
  await expect(rows).toHaveCount(1);
  await page.locator('#harness-q').fill(`Views A ${tag}`);
  await page.locator('#harness-q').press('Enter');
  await expect(rows).toHaveCount(2);
  await expect(page.locator('a.chip[data-view="all"]')).toHaveAttribute('aria-current', 'page');

  // A link reproduces the same view.
  await page.goto(`/harness?view=answered&q=${tag}`);
  await expect(rows).toHaveCount(1);
  expect(errors).toEqual([]);
});

test('keyset paging reaches row 250 of 250', async ({ page, request }) => {
  test.setTimeout(60_000);
  const errors = watchErrors(page);
  const title = `Paging ${uid()}`;
  // Five tasks with one title (a task may notify 60 times at once: the
  // per-task rate limit), 50 lines each.
  const tasks = [];
  for (let t = 0; t < 5; t++) tasks.push(await createTask(request, title));
  for (let batch = 0; batch < 250; batch += 25) {
    await Promise.all(Array.from({ length: 25 }, (_, i) =>
      notify(request, tasks[Math.floor((batch + i) / 50)], `line ${String(batch + i + 1).padStart(3, '0')}`)));
  }
  // Without JavaScript the "load more" control is a plain link with a cursor.
  const html = await (await request.get(`/harness?view=all&q=${encodeURIComponent(title)}`)).text();
  expect(html).toMatch(/id="load-more"[^>]*|href="\/harness\?view=all&amp;q=[^"]*&amp;cursor=/);

  await openLive(page, `/harness?view=all&q=${encodeURIComponent(title)}`);
  const rows = page.locator('table.harness tbody tr');
  await expect(rows).toHaveCount(50);
  await expect(page.locator('#load-more')).toHaveAttribute('href', /cursor=/);
  for (let shown = 100; shown <= 250; shown += 50) {
    await page.locator('#load-more').click();
    await expect(rows).toHaveCount(shown);
  }
  await expect(page.locator('#load-more')).toHaveCount(0);
  await expect(page.locator('#list-end')).toBeVisible();
  await expect(page.locator('#row-count')).toHaveAttribute('data-count', '250');
  const contents = await page.locator('table.harness tbody td.content .clamp').allTextContents();
  expect(new Set(contents).size).toBe(250);
  expect(contents[249]).toBe('line 001');
  await rows.nth(249).scrollIntoViewIfNeeded();
  expect(errors).toEqual([]);
});

test('language: switch to Chinese and back; remembered in a cookie', async ({ page, context }) => {
  const errors = watchErrors(page);
  await page.goto('/harness');
  await expect(page.locator('h1')).toHaveText('Inbox');
  await page.locator('#lang-switch').click();
  await expect(page.locator('h1')).toHaveText('收件箱');
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await expect(page.locator('table.harness thead th').first()).toHaveText('工作区');
  const cookies = await context.cookies();
  expect(cookies.find((c) => c.name === 'harness_lang')?.value).toBe('zh');
  await page.goto('/tasks');
  await expect(page.locator('h1')).toHaveText('任务');
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await page.locator('#lang-switch').click();
  await expect(page.locator('h1')).toHaveText('Tasks');
  expect(errors).toEqual([]);
});

test.describe('Accept-Language', () => {
  test.use({ locale: 'zh-CN' });
  test('a Chinese browser gets the Chinese page', async ({ page }) => {
    await page.goto('/harness');
    await expect(page.locator('h1')).toHaveText('收件箱');
    await expect(page.locator('a.chip[data-view="pending"]')).toHaveText('待回复');
  });
  test('the login and logout pages too', async ({ page }) => {
    await page.goto('/logout');
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
    await expect(page.locator('h1')).toHaveText('退出登录');
    await expect(page.getByRole('button', { name: '在所有设备上退出' })).toBeVisible();
  });
});

test.describe('Accept-Language, logged out', () => {
  test.use({ locale: 'zh-CN', storageState: { cookies: [], origins: [] } });
  test('the login page is in Chinese', async ({ page }) => {
    await page.goto('/login');
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
    await expect(page.locator('h1')).toHaveText('登录');
    await expect(page.getByLabel('管理员令牌')).toBeVisible();
  });
});

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });
  test('read, reply, page and switch views with plain forms and links', async ({ page, request }) => {
    const title = `NoJS ${uid()}`;
    const taskId = await createTask(request, title);
    await ask(request, taskId, 'Works without scripts?');
    await page.goto(`/harness?view=pending&q=${encodeURIComponent(title)}`);
    const row = page.locator(`tr[data-task-id="${taskId}"]`);
    await expect(row).toContainText('Works without scripts?');
    await row.locator('textarea[name="text"]').fill('Yes');
    await row.getByRole('button', { name: 'Send' }).click();
    await expect(page).toHaveURL(/\/harness\?view=pending/);
    await expect(row).toHaveCount(0);
    const [m] = await messages(request, taskId);
    expect(m.state).toBe('ANSWERED');
    await page.locator('a.chip[data-view="answered"]').click();
    await expect(row).toContainText('Yes');
  });
});

test('no channel configured: said once, with a link to Settings → Notifications', async ({ page, request }) => {
  const errors = watchErrors(page);
  await openLive(page, '/harness');
  await expect(page.locator('#no-channel')).toHaveCount(1);
  await page.locator('#no-channel a').click();
  await expect(page).toHaveURL(/\/settings#notifications$/);
  await expect(page.locator('#no-targets')).toBeVisible();

  await page.locator('#target-label').fill('Phone');
  await page.locator('#target-dest').fill('chat-42');
  await page.locator('#add-target button[type="submit"]').click();
  await expect(page.locator('#targets li')).toHaveCount(1);
  await page.goto('/harness');
  await expect(page.locator('#no-channel')).toHaveCount(0);
  const stored = await api(request, 'GET', '/api/settings/notify-targets');
  expect(JSON.stringify(stored.body)).toContain('chat-42');

  await page.goto('/settings');
  await page.locator('#targets li button', { hasText: 'Remove' }).click();
  await expect(page.locator('#no-targets')).toBeVisible();
  expect(errors).toEqual([]);
});

test('task pages: create, list, detail with timeline, children and the terminal place', async ({ page, request }) => {
  const errors = watchErrors(page);
  const title = `Parent ${uid()}`;
  await openLive(page, '/tasks');
  await page.locator('#task-title').fill(title);
  await page.locator('#task-description').fill('Do the thing');
  await page.locator('#create-task button[type="submit"]').click();
  await expect(page.locator('#create-status')).toContainText(title);
  const created = page.locator('table.tasks tbody tr', { hasText: title });
  await expect(created).toHaveCount(1);
  const parentId = await created.getAttribute('data-task-id');
  expect(parentId).toBeTruthy();
  const row = page.locator(`table.tasks tbody tr[data-task-id="${parentId}"]`);

  // A child through the form, choosing the parent.
  const child = `Child ${uid()}`;
  await page.locator('#task-title').fill(child);
  await page.locator('#task-parent').selectOption(parentId!);
  await page.locator('#create-task button[type="submit"]').click();
  await expect(page.locator('table.tasks tbody tr', { hasText: child })).toContainText(title);

  await ask(request, parentId!, 'Timeline question?');
  await expect(row.locator('[data-run-state="waiting"]')).toBeVisible();
  await row.locator('td').first().getByRole('link').click();
  await expect(page.locator('#task-title')).toHaveText(title);
  await expect(page.locator('#task-timeline li')).toHaveCount(1);
  await expect(page.locator('#task-timeline')).toContainText('Timeline question?');
  await expect(page.locator('#task-children li')).toContainText(child);
  await expect(page.locator('section#terminal')).toBeVisible();
  await notify(request, parentId!, 'Timeline progress');
  await expect(page.locator('#task-timeline li')).toHaveCount(2);
  expect(errors).toEqual([]);
});

test('screenshot of the page with data', async ({ page, request }) => {
  const tag = uid();
  const t1 = await createTask(request, `Migrate the billing service ${tag}`);
  const t2 = await createTask(request, `Write the release notes ${tag}`);
  await notify(request, t1, 'Schema migration 3/7 applied; running the backfill.');
  await ask(request, t1, 'The backfill will lock the invoices table for ~4 minutes. Proceed now, or wait for the nightly window?');
  await ask(request, t2, 'Should the notes mention the deprecated v1 endpoints?');
  await api(request, 'POST', '/api/internal/harness/reply', { taskId: t2, text: 'Yes, with the removal date.' });
  await openLive(page, '/harness?view=all');
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.screenshot({ path: 'test-results/harness-page.png', fullPage: false });
});
