// running agents from the page (task form, Start/Stop/Restart/Resume,
// true translated status), a phone viewer that cannot shrink the desktop's
// terminal, the phone layout (no horizontal scroll), page titles.
import { test, expect, Page, Browser } from '@playwright/test';
import { api } from './api';
import { STORAGE_STATE } from '../global-setup';

async function hydrated(page: Page, path: string) {
  await page.goto(path);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
}

async function createFromForm(page: Page, title: string, line: string, opts: { prompt?: string; startNow?: boolean } = {}) {
  await hydrated(page, '/tasks');
  await page.fill('#task-title', title);
  await page.selectOption('#task-provider', 'command');
  await page.fill('#task-command', line);
  await page.fill('#task-cwd', '/tmp');
  if (opts.prompt) await page.fill('#task-prompt', opts.prompt);
  if (opts.startNow) await page.check('#task-start-now');
  await page.click('#create-task button[type=submit]');
  const link = page.locator('#create-status a');
  await expect(link).toHaveText(title);
  // The form is cleared after a successful create.
  await expect(page.locator('#task-title')).toHaveValue('');
  await expect(page.locator('#task-command')).toHaveValue('');
  await expect(page.locator('#task-start-now')).not.toBeChecked();
  const href = await link.getAttribute('href');
  return href!.split('/').pop()!;
}

test.describe('desktop', () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test('a shell line runs with sh -c; the command and the true status are shown', async ({ page, request }) => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const id = await createFromForm(page, `Echo ${Date.now()}`, 'echo hello world', { startNow: true });
    await hydrated(page, `/tasks/${id}`);
    await expect(page.locator('#task-command')).toHaveText('echo hello world');
    // The node that ran it, by its name (the hostname here), its id in the tooltip.
    const nodes = (await api(request, 'GET', '/api/nodes')).body;
    await expect(page.locator('#task-node')).toHaveText(nodes.thisNodeName);
    await expect(page.locator('#task-node')).toHaveAttribute('title', `Node id: ${nodes.thisNode}`);
    await page.screenshot({ path: 'test-results/task-node.png', fullPage: true });
    await expect(page.locator('.page-head [data-run-state]')).toHaveAttribute('data-run-state', 'finished', { timeout: 10_000 });
    await expect(page.locator('.page-head [data-run-state]')).toHaveText('finished');
    await expect(page.locator('#terminal-state')).toHaveText('exited (code 0)', { timeout: 10_000 });

    const failing = await createFromForm(page, `Fails ${Date.now()}`, 'echo about to fail; exit 3', { startNow: true });
    await hydrated(page, `/tasks/${failing}`);
    await expect(page.locator('.page-head [data-run-state]')).toHaveText('failed (exit code 3)', { timeout: 10_000 });
    expect(errors).toEqual([]);
  });

  test('start with a prompt, stop, restart from the task page; blocked buttons say why', async ({ page, request }) => {
    const id = await createFromForm(page, `Control ${Date.now()}`, 'echo "started with: $1"; exec sleep 120');
    await hydrated(page, `/tasks/${id}`);
    const badge = page.locator('.page-head [data-run-state]');
    await expect(badge).toHaveText('not started');
    const controls = page.locator('.task-controls.full');
    await expect(controls.locator('[data-action=stop]')).toBeDisabled();
    await expect(controls.locator('[data-action=stop]')).toHaveAttribute('title', 'the agent is not running');
    await expect(controls.locator('[data-action=restart]')).toBeDisabled();
    await expect(controls.locator('[data-action=resume]')).toHaveAttribute('title', 'no session id known');
    await expect(page.locator('#control-why')).toContainText('Resume — no session id known');

    await page.fill('#start-prompt', 'first words');
    await controls.locator('[data-action=start]').click();
    await expect(badge).toHaveText('running', { timeout: 10_000 });
    await expect(page.locator('#terminal .ht-term')).toContainText('started with: first words', { timeout: 10_000 });
    // The terminal bar: translated state, full screen, Shift+Esc leaves the terminal.
    await expect(page.locator('#terminal-state')).toHaveText('connected');
    await page.locator('#terminal .ht-term').click();
    await expect(page.locator('#terminal .ht-term')).toHaveClass(/ht-focused/);
    await page.keyboard.press('Shift+Escape');
    await expect(page.locator('#terminal-fullscreen')).toBeFocused();
    await page.keyboard.press('Enter');
    await expect(page.locator('.terminal-wrap')).toHaveClass(/fullscreen/);
    await expect(page.locator('#terminal-fullscreen')).toHaveAttribute('aria-pressed', 'true');
    await page.locator('#terminal-fullscreen').click();
    await expect(page.locator('.terminal-wrap')).not.toHaveClass(/fullscreen/);
    await expect(controls.locator('[data-action=start]')).toBeDisabled();
    await expect(controls.locator('[data-action=start]')).toHaveAttribute('title', 'the agent is running');

    await controls.locator('[data-action=stop]').click();
    await expect(badge).toHaveText('stopped', { timeout: 10_000 });
    // Stopped: its terminal keeps the last output, exited, not
    // "reconnecting" forever.
    await expect(page.locator('#terminal .ht-term')).toHaveAttribute('data-state', 'exited', { timeout: 10_000 });
    await expect(page.locator('#terminal .ht-term')).toContainText('started with: first words');
    const stopped = await api(request, 'GET', `/api/tasks/${id}`);
    expect(stopped.body.execution.status).toBe('STOPPED');

    await controls.locator('[data-action=restart]').click();
    await expect(badge).toHaveText('running', { timeout: 10_000 });
    await controls.locator('[data-action=stop]').click();
    await expect(badge).toHaveText('stopped', { timeout: 10_000 });
  });

  test('a start prompt being typed survives a live update of the page', async ({ page, request }) => {
    const id = await createFromForm(page, `Prompt ${Date.now()}`, 'echo "started with: $1"; exec sleep 120');
    await hydrated(page, `/tasks/${id}`);
    const field = page.locator('#start-prompt');
    await field.fill('kept words');
    // A change of the task ticks the page's live stream: the task is
    // fetched again and its header and controls are built again (the badge
    // says so); the prompt being typed stays.
    const ask = await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'Which branch?' });
    expect(ask.status).toBeLessThan(300);
    await expect(page.locator('.page-head [data-run-state]')).toHaveText('waiting for you', { timeout: 10_000 });
    await expect(field).toHaveValue('kept words');
    await page.locator('.task-controls.full [data-action=start]').click();
    await expect(page.locator('#terminal .ht-term')).toContainText('started with: kept words', { timeout: 10_000 });
    await expect(field).toHaveValue('');
    await api(request, 'POST', `/api/tasks/${id}/stop`);
  });

  test('row actions on /tasks start and stop a task; the unattended switch explains a refusal', async ({ page, request }) => {
    const title = `Row ${Date.now()}`;
    const created = await api(request, 'POST', '/api/tasks', {
      title, agent: { provider: 'command', command: ['sh', '-c', 'exec sleep 120'], cwd: '/tmp' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    await hydrated(page, '/tasks');
    const row = page.locator(`tr[data-task-id="${id}"]`);
    await expect(row.locator('[data-run-state]')).toHaveText('not started');
    await row.getByRole('button', { name: `Start: ${title}`, exact: true }).click();
    await expect(row.locator('[data-run-state]')).toHaveText('running', { timeout: 10_000 });
    await row.getByRole('button', { name: `Stop: ${title}`, exact: true }).click();
    await expect(row.locator('[data-run-state]')).toHaveText('stopped', { timeout: 10_000 });

    // No unattended channel is configured: the switch reports the 409.
    await hydrated(page, `/tasks/${id}`);
    await page.locator('#unattended-switch').click();
    await expect(page.locator('#control-status')).toBeVisible();
    await expect(page.locator('#control-status')).toHaveAttribute('role', 'alert');
  });

  test('a waiting task is "waiting for you"; titles name the page and the count', async ({ page, request }) => {
    const created = await api(request, 'POST', '/api/tasks', { title: `Asks ${Date.now()}`, agent: { provider: 'command', command: ['true'] } });
    const id = created.body.id;
    const ask = await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'Which **database**?\n\n```\nsql\n```' });
    expect(ask.status).toBeLessThan(300);
    await hydrated(page, `/tasks/${id}`);
    await expect(page.locator('.page-head [data-run-state]')).toHaveText('waiting for you');
    // The question as Markdown: bold and a monospaced code block, no raw HTML.
    await expect(page.locator('#task-timeline .markdown strong')).toHaveText('database');
    await expect(page.locator('#task-timeline .markdown pre.md-code')).toHaveText('sql');
    // The reply box is next to the terminal while the agent waits.
    await expect(page.locator('#task-reply')).toBeVisible();
    await hydrated(page, '/tasks');
    await expect(page).toHaveTitle(/^\(\d+\) Tasks — Harness$/);
    await hydrated(page, '/harness');
    await expect(page).toHaveTitle(/^\(\d+\) Inbox — Harness$/);
    // The dialog links to the task and its terminal; the question is Markdown.
    await page.locator(`tr[data-task-id="${id}"] td.content`).click();
    await expect(page.locator('dialog[open] #detail-sent strong')).toHaveText('database');
    await expect(page.locator('dialog[open] #detail-task-link')).toHaveAttribute('href', `/tasks/${id}`);
    await expect(page.locator('dialog[open] #detail-terminal-link')).toHaveAttribute('href', `/tasks/${id}#terminal`);
    await page.keyboard.press('Escape');
    const icon = await page.locator('link[rel~=icon]').getAttribute('href');
    expect(icon).toMatch(/^data:image\/svg\+xml,/);
    await hydrated(page, `/tasks/${id}`);
    await page.fill('#task-reply-text', 'postgres');
    await page.click('#task-reply-send');
    await expect(page.locator('.page-head [data-run-state]')).toHaveText('not started', { timeout: 10_000 });
    const after = await api(request, 'GET', `/api/harness/messages?view=all&taskId=${id}`);
    expect(JSON.stringify(after.body)).toContain('postgres');
  });

  test('a superseded question is "replaced by a newer question"', async ({ page, request }) => {
    const created = await api(request, 'POST', '/api/tasks', { title: `Twice ${Date.now()}`, agent: { provider: 'command', command: ['true'] } });
    const id = created.body.id;
    await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'First <b>question</b>?' });
    await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'Second question?' });
    await hydrated(page, `/tasks/${id}`);
    const items = page.locator('#task-timeline li');
    await expect(items).toHaveCount(2);
    await expect(items.nth(1).locator('[data-status=replaced]')).toHaveText('replaced by a newer question');
    // Raw HTML in a question is shown as text.
    await expect(items.nth(1)).toContainText('First <b>question</b>?');
    await expect(items.nth(1).locator('b')).toHaveCount(0);
  });

  test('projects: add from the page; the path is checked on the server', async ({ page }) => {
    await hydrated(page, '/projects');
    await page.locator('details:has(#add-project) summary').click();
    const name = `proj-${Date.now()}`;
    await page.fill('#project-name', name);
    await page.fill('#project-path', '/definitely/not/a/dir');
    await page.click('#add-project button[type=submit]');
    await expect(page.locator('#project-status')).toHaveAttribute('role', 'alert');
    await expect(page.locator('#project-status')).toContainText('does not exist');
    await page.fill('#project-name', name);
    await page.fill('#project-path', '/tmp');
    await page.click('#add-project button[type=submit]');
    await expect(page.locator('#project-status')).toHaveAttribute('role', 'status');
    await expect(page.locator('main')).toContainText(name);
    await expect(page.locator('#project-name')).toHaveValue('');
  });
});

async function phoneAndDesktop(browser: Browser) {
  const desktop = await browser.newContext({ storageState: STORAGE_STATE, viewport: { width: 1440, height: 900 } });
  const phone = await browser.newContext({ storageState: STORAGE_STATE, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
  return { desktop, phone };
}

test('a phone viewer never shrinks the desktop terminal; its own size only when alone', async ({ browser, request }) => {
  const created = await api(request, 'POST', '/api/tasks', {
    title: `Sizes ${Date.now()}`, agent: { provider: 'command', command: ['sh', '-c', 'exec sleep 120'], cwd: '/tmp' },
  });
  const id = created.body.id;
  expect((await api(request, 'POST', `/api/tasks/${id}/start`)).status).toBe(200);
  const size = async () => {
    const s = await api(request, 'GET', `/api/tasks/${id}/screen`);
    return [s.body.rows as number, s.body.cols as number];
  };
  const { desktop, phone } = await phoneAndDesktop(browser);
  const d = await desktop.newPage();
  await hydrated(d, `/tasks/${id}`);
  await expect(d.locator('#terminal .ht-term')).toHaveAttribute('data-state', 'connected', { timeout: 10_000 });
  await expect.poll(async () => (await size())[1], { timeout: 10_000 }).toBeGreaterThan(100);
  const desktopSize = await size();

  const p = await phone.newPage();
  await hydrated(p, `/tasks/${id}`);
  await expect(p.locator('#terminal .ht-term')).toHaveAttribute('data-state', 'connected', { timeout: 10_000 });
  // Give the phone's resize time to arrive; the PTY keeps the desktop's size.
  await p.waitForTimeout(500);
  expect(await size()).toEqual(desktopSize);
  // The phone page itself does not scroll sideways (the terminal scrolls inside).
  expect(await p.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);

  await p.close();
  await d.waitForTimeout(300);
  expect(await size()).toEqual(desktopSize);

  // Alone, the phone gets its own size; the desktop's comes back with it.
  const p2 = await phone.newPage();
  await hydrated(p2, `/tasks/${id}`);
  await expect(p2.locator('#terminal .ht-term')).toHaveAttribute('data-state', 'connected', { timeout: 10_000 });
  await d.close();
  await expect.poll(async () => (await size())[1], { timeout: 10_000 }).toBeLessThan(60);
  const d2 = await desktop.newPage();
  await hydrated(d2, `/tasks/${id}`);
  await expect.poll(async () => size(), { timeout: 10_000 }).toEqual(desktopSize);
  await desktop.close();
  await phone.close();
  await api(request, 'POST', `/api/tasks/${id}/stop`);
});

for (const [name, viewport] of [['phone', { width: 390, height: 844 }], ['desktop', { width: 1440, height: 900 }]] as const) {
  test(`${name}: no page scrolls sideways`, async ({ browser, request }) => {
    const created = await api(request, 'POST', '/api/tasks', {
      title: `A rather long task title for the ${name} layout check ${Date.now()}`,
      agent: { provider: 'command', command: ['sh', '-c', 'echo a-very-long-line-without-spaces-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'], cwd: '/tmp' },
    });
    const id = created.body.id;
    await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'A question with a long line: ' + 'word '.repeat(60) });
    const ctx = await browser.newContext({ storageState: STORAGE_STATE, viewport });
    const page = await ctx.newPage();
    for (const path of ['/', '/harness', '/tasks', `/tasks/${id}`, '/projects', '/settings']) {
      await hydrated(page, path);
      const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      expect(scroll, `${path} scrolls sideways at ${viewport.width}px`).toBeLessThanOrEqual(inner);
    }
    if (name === 'phone') {
      // /harness rows are cards: the question and its reply box, no table header row.
      await hydrated(page, '/harness');
      await expect(page.locator('table.harness thead')).not.toBeInViewport();
      await page.screenshot({ path: 'test-results/phone-harness.png', fullPage: true });
      await hydrated(page, '/tasks');
      await page.screenshot({ path: 'test-results/phone-tasks.png', fullPage: true });
    }
    await ctx.close();
  });
}

test('browser notifications: asked from a visible control; the sound choice is remembered', async ({ browser }) => {
  const ctx = await browser.newContext({ storageState: STORAGE_STATE, permissions: ['notifications'] });
  const page = await ctx.newPage();
  await hydrated(page, '/settings');
  await expect(page.locator('#notifications-state')).toHaveText(/Notifications are on/);
  await expect(page.locator('#enable-notifications')).toBeDisabled();
  await page.locator('#alert-sound').check();
  await page.reload();
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('#alert-sound')).toBeChecked();
  await ctx.close();
  const fresh = await browser.newContext({ storageState: STORAGE_STATE });
  const p2 = await fresh.newPage();
  await hydrated(p2, '/');
  await expect(p2.locator('#enable-notifications')).toBeEnabled();
  await expect(p2.locator('#notifications-state')).toHaveText('Notifications are off.');
  await fresh.close();
});
