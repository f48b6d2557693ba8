// Projects and their Workbench, in a real browser
// against a real server, at 1440x900 and 390x844:
// editing a project from the page (the path checked on the server, errors
// next to their field); the plan page links each plan task to the supervised
// task runs `harness run` created, with its page title and local/relative
// times; the phone nav collapses behind a menu button; /harness filters
// "from child tasks"; the project page shows the Workbench's runtime state;
// keyboard-only use of /harness, its dialog and the task page.
import { test, expect, Page, APIRequestContext } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, createTask } from './api';

const uid = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const VIEWPORTS = [['desktop', { width: 1440, height: 900 }], ['phone', { width: 390, height: 844 }]] as const;

async function hydrated(page: Page, path: string) {
  await page.goto(path);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
}

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

async function newProject(request: APIRequestContext, prefix: string) {
  const path = mkdtempSync(join(tmpdir(), `harness-${prefix}-`));
  const name = `${prefix}-${uid()}`;
  const created = await api(request, 'POST', '/api/projects', { name, path });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id as string, name, path };
}

async function noSidewaysScroll(page: Page) {
  const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(scroll).toBeLessThanOrEqual(inner);
}

/// Press Tab (or Shift+Tab) until `selector` has the focus (keyboard only).
async function tabTo(page: Page, selector: string, max = 80, key = 'Tab') {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press(key);
  }
  throw new Error(`Tab never reached ${selector}`);
}

/// The focused element draws a visible focus ring.
async function focusRingVisible(page: Page) {
  const outline = await page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el) return 'none';
    const s = getComputedStyle(el);
    return `${s.outlineStyle} ${s.outlineWidth}`;
  });
  expect(outline).not.toMatch(/^none|\b0px$/);
}

async function planRuns(page: Page, request: APIRequestContext) {
  const errors = watchErrors(page);
  const bin = process.env.HARNESS_BIN;
  const dataDir = process.env.HARNESS_DATA_DIR;
  expect(bin, 'HARNESS_BIN (scripts/e2e.sh)').toBeTruthy();
  const dir = mkdtempSync(join(tmpdir(), 'harness-plan-runs-'));
  const run = (cmd: string, args: string[]) => execFileSync(cmd, args, {
    cwd: dir,
    env: { ...process.env, HARNESS_SERVER_URL: '', HARNESS_ADMIN_TOKEN: '', HARNESS_TASK_ID: '', HARNESS_STATE_ROOT: '' },
    encoding: 'utf8',
  });
  run('git', ['init', '-q', '-b', 'main']);
  run('git', ['config', 'user.email', 't@example.com']);
  run('git', ['config', 'user.name', 't']);
  writeFileSync(join(dir, 'README'), 'base\n');
  run('git', ['add', 'README']);
  run('git', ['commit', '-qm', 'base']);
  run(bin!, ['init']);
  run(bin!, ['add', 'Breaks on purpose', '--validate', 'test -f never-made.txt', '--max-attempts', '1']);
  const name = `plan-runs-${uid()}`;
  const project = await api(request, 'POST', '/api/projects', { name, path: dir });
  expect(project.status).toBe(201);
  // Supervised mode against this server: the plan task runs as a Harness task.
  try {
    run(bin!, ['run', '--agent', 'echo supervised; exit 3', '--data-dir', dataDir!]);
  } catch {
    // `harness run` exits 1 when a task failed: expected.
  }
  await hydrated(page, `/projects/${project.body.id}/plan`);
  await expect(page).toHaveTitle(new RegExp(`^(\\(\\d+\\) )?Task list · ${name} — Harness$`));
  const row = page.locator('#plan-tree tr[data-task-id="task-001"]');
  await expect(row).toHaveAttribute('data-status', 'failed');
  const link = row.locator('a.plan-run-link');
  await expect(link).toHaveCount(1);
  await expect(link.locator('[data-run-state]')).toHaveText('failed (exit code 3)');
  const href = await link.getAttribute('href');
  const taskId = href!.split('/').pop()!;
  const task = await api(request, 'GET', `/api/tasks/${taskId}`);
  expect(task.body.projectId).toBe(project.body.id);
  expect(task.body.title).toContain('task-001');
  // Times are relative with the local time on hover, like elsewhere.
  await expect(row.locator('time[data-ms]')).toHaveCount(1);
  const title = await row.locator('time[data-ms]').getAttribute('title');
  expect(title).not.toContain('UTC');
  await expect(page.locator('#plan-last-session time[data-ms]')).toHaveCount(1);
  await noSidewaysScroll(page);
  await link.click();
  await expect(page).toHaveURL(new RegExp(`/tasks/${taskId}$`));
  expect(errors).toEqual([]);
}

for (const [name, viewport] of VIEWPORTS) {
  test.describe(name, () => {
    test.use({ viewport });

    test('edit a project: the path is checked on the server, errors next to the field', async ({ page, request }) => {
      const errors = watchErrors(page);
      const p = await newProject(request, 'edit');
      const other = await newProject(request, 'taken');
      await hydrated(page, '/projects');
      const row = page.locator(`tr[data-project-id="${p.id}"]`);
      await row.getByRole('button', { name: `Edit ${p.name}`, exact: true }).click();
      const form = page.locator('#edit-project-form');
      await expect(form).toBeVisible();
      await expect(page.locator('#edit-project-name')).toBeFocused();
      await expect(page.locator('#edit-project-path')).toHaveValue(p.path);

      await page.fill('#edit-project-path', '/definitely/not/here-e2e');
      await form.locator('button[type=submit]').click();
      await expect(page.locator('#edit-project-path-error')).toContainText('does not exist');
      await expect(page.locator('#edit-project-path')).toHaveAttribute('aria-invalid', 'true');
      await expect(page.locator('#edit-project-name-error')).toBeEmpty();

      const file = join(p.path, 'a-file.txt');
      writeFileSync(file, 'x');
      await page.fill('#edit-project-path', file);
      await form.locator('button[type=submit]').click();
      await expect(page.locator('#edit-project-path-error')).toContainText('is not a directory');

      // A name already used in the workspace: the error is next to the name.
      await page.fill('#edit-project-path', p.path);
      await page.fill('#edit-project-name', other.name);
      await form.locator('button[type=submit]').click();
      await expect(page.locator('#edit-project-name-error')).toContainText('already exists');
      await expect(page.locator('#edit-project-path-error')).toBeEmpty();
      await noSidewaysScroll(page);

      const moved = mkdtempSync(join(tmpdir(), 'harness-moved-'));
      const renamed = `${p.name}-renamed`;
      await page.fill('#edit-project-name', renamed);
      await page.fill('#edit-project-path', moved);
      await form.locator('button[type=submit]').click();
      await expect(page.locator('#project-edit-status')).toContainText(renamed);
      await expect(form).toHaveCount(0);
      await expect(row).toContainText(renamed);
      await expect(row.locator('code.project-path')).toHaveText(moved);
      const stored = (await api(request, 'GET', '/api/projects')).body.find((x: { id: string }) => x.id === p.id);
      expect(stored.name).toBe(renamed);
      expect(stored.path).toBe(moved);
      expect(errors).toEqual([]);
    });

    // The flake of 2026-12-04 (six wasm `unreachable` page errors once in "edit a project"):
    // the edit form closes (saved, cancelled) while its approval rules are still loading.
    test('edit form closed while its approval rules load: no wasm panic', async ({ page, request }) => {
      const errors = watchErrors(page);
      const p = await newProject(request, 'slowrules');
      let release: () => void = () => {};
      const held = new Promise<void>((ok) => { release = ok; });
      await page.route('**/sfn/project_approval_policy*', async (route) => {
        await held;
        await route.continue();
      });
      await hydrated(page, '/projects');
      const row = page.locator(`tr[data-project-id="${p.id}"]`);
      // Cancelled while loading, then the answer arrives.
      await row.getByRole('button', { name: `Edit ${p.name}`, exact: true }).click();
      await expect(page.locator('#edit-project-form')).toBeVisible();
      await page.locator('#edit-project-cancel').click();
      await expect(page.locator('#edit-project-form')).toHaveCount(0);
      release();
      await page.waitForTimeout(500);
      // Saved while loading (a second request held again), then the answer arrives.
      let release2: () => void = () => {};
      const held2 = new Promise<void>((ok) => { release2 = ok; });
      await page.unroute('**/sfn/project_approval_policy*');
      await page.route('**/sfn/project_approval_policy*', async (route) => {
        await held2;
        await route.continue();
      });
      await row.getByRole('button', { name: `Edit ${p.name}`, exact: true }).click();
      const form = page.locator('#edit-project-form');
      await expect(form).toBeVisible();
      await page.fill('#edit-project-name', `${p.name}-x`);
      await form.locator('button[type=submit]').click();
      await expect(page.locator('#project-edit-status')).toContainText(`${p.name}-x`);
      await expect(form).toHaveCount(0);
      release2();
      await page.waitForTimeout(500);
      // And once more: opened, answer arrives, saved.
      await page.unroute('**/sfn/project_approval_policy*');
      await row.getByRole('button', { name: `Edit ${p.name}-x`, exact: true }).click();
      await expect(page.locator('#project-policy-form')).toBeVisible();
      await page.fill('#edit-project-name', `${p.name}-y`);
      await form.locator('button[type=submit]').click();
      await expect(page.locator('#project-edit-status')).toContainText(`${p.name}-y`);
      await page.waitForTimeout(500);
      expect(errors).toEqual([]);
    });

    // The same flake's other suspect: every row's Workbench cell reads its runtime state in a
    // resource of its own, inside the list that a live change rebuilds.
    test('the list rebuilt while every row Workbench state loads: no wasm panic', async ({ page, request }) => {
      const errors = watchErrors(page);
      for (let i = 0; i < 6; i++) await newProject(request, 'wbslow');
      // Both reads answer late and out of order.
      for (const path of ['**/sfn/workbench_runtime*', '**/sfn/projects']) {
        await page.route(path, async (route) => {
          await new Promise((ok) => setTimeout(ok, Math.random() * 500));
          await route.continue().catch(() => {});
        });
      }
      await hydrated(page, '/projects');
      // Live changes (a project added over the API) while the cells load, several times.
      for (let i = 0; i < 12; i++) {
        await newProject(request, 'wbtick');
        await page.waitForTimeout(Math.random() * 300);
      }
      await page.waitForTimeout(1500);
      expect(errors).toEqual([]);
    });

    test('the project page shows the Workbench runtime state', async ({ page, request }) => {
      const p = await newProject(request, 'wbrt');
      const made = await api(request, 'POST', `/api/projects/${p.id}/workbench`, {
        agent: { provider: 'command', command: ['sh', '-c', 'echo workbench up; exec sleep 60'], cwd: p.path },
      });
      expect(made.status).toBe(201);
      const wb = made.body.id;
      await hydrated(page, '/projects');
      const runtime = page.locator(`tr[data-project-id="${p.id}"] .wb-runtime`);
      await expect(runtime).toHaveAttribute('data-runtime-state', 'STOPPED');
      await expect(runtime).toContainText('stopped');
      await expect(runtime.locator('.wb-reason')).toHaveText('The Workbench terminal is not running.');
      await expect(runtime).toContainText('0 pending event(s)');

      expect((await api(request, 'POST', `/api/tasks/${wb}/start`)).status).toBe(200);
      // Running, no turn end reported yet: busy, a turn in progress.
      await expect(runtime).toHaveAttribute('data-runtime-state', 'BUSY', { timeout: 10_000 });
      await expect(runtime.locator('.wb-reason')).toHaveText('A turn is in progress.');
      // The provider's turn end (the Stop hook): idle.
      const stop = await api(request, 'POST', '/api/internal/hooks/stop', { taskId: wb, eventId: `turn-${uid()}`, lastReply: 'ready' });
      expect(stop.status).toBe(200);
      await expect(runtime).toHaveAttribute('data-runtime-state', 'IDLE', { timeout: 10_000 });
      await expect(runtime.locator('.wb-reason')).toHaveCount(0);
      const rest = await api(request, 'GET', `/api/projects/${p.id}/workbench/runtime`);
      expect(rest.body.state).toBe('IDLE');
      expect(rest.body.pendingEvents).toBe(0);
      await noSidewaysScroll(page);

      // Also on the plan page.
      await hydrated(page, `/projects/${p.id}/plan`);
      await expect(page.locator('.plan-workbench .wb-runtime')).toHaveAttribute('data-runtime-state', 'IDLE');
      await api(request, 'POST', `/api/tasks/${wb}/stop`);
      await expect(page.locator('.plan-workbench .wb-runtime')).toHaveAttribute('data-runtime-state', 'STOPPED', { timeout: 10_000 });
    });

    test('plan page: a title, local + relative times, each plan task links to its supervised runs', async ({ page, request }) => {
      await planRuns(page, request);
    });

    test('/harness filters "from child tasks"', async ({ page, request }) => {
      const tag = uid();
      const parent = await createTask(request, `Parent ${tag}`);
      const child = await api(request, 'POST', '/api/tasks', {
        title: `Child ${tag}`, parentTaskId: parent, agent: { provider: 'command', command: ['true'] },
      });
      expect(child.status).toBe(201);
      const plain = await createTask(request, `Plain ${tag}`);
      for (const taskId of [child.body.id, plain]) {
        const r = await api(request, 'POST', '/api/internal/harness/ask', { taskId, question: `Question ${tag}?` });
        expect(r.status).toBe(200);
      }
      await hydrated(page, `/harness?view=pending&q=${tag}`);
      const filter = page.locator('#filter-children');
      await expect(filter).toBeVisible();
      await expect(filter).toHaveText('From child tasks');
      await expect(filter).not.toHaveAttribute('aria-current', 'true');
      await expect(page.locator(`tr[data-task-id="${plain}"]`)).toHaveCount(1);
      await filter.click();
      await expect(page).toHaveURL(/from=children/);
      await expect(filter).toHaveAttribute('aria-current', 'true');
      await expect(page.locator(`tr[data-task-id="${child.body.id}"]`)).toHaveCount(1);
      await expect(page.locator(`tr[data-task-id="${plain}"]`)).toHaveCount(0);
      // The search keeps the filter.
      await expect(page.locator('form.search input[name=from]')).toHaveValue('children');
      await noSidewaysScroll(page);
      await filter.click();
      await expect(page.locator(`tr[data-task-id="${plain}"]`)).toHaveCount(1);
    });
  });
}

test.describe('phone nav', () => {
  test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

  test('collapses behind a menu button (aria-expanded, keyboard usable)', async ({ page }) => {
    await hydrated(page, '/tasks');
    const toggle = page.locator('#nav-toggle');
    const nav = page.locator('#main-nav');
    await expect(toggle).toBeVisible();
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await expect(toggle).toHaveAttribute('aria-controls', 'main-nav');
    await expect(nav).toBeHidden();
    await tabTo(page, '#nav-toggle');
    await focusRingVisible(page);
    await page.keyboard.press('Enter');
    await expect(toggle).toHaveAttribute('aria-expanded', 'true');
    await expect(nav).toBeVisible();
    await page.keyboard.press('Tab');
    await expect(nav.locator('a').first()).toBeFocused();
    await page.keyboard.press('Escape');
    await expect(nav).toBeHidden();
    await expect(toggle).toBeFocused();
    await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    // Open, follow a link: the menu closes on the new page.
    await toggle.click();
    await nav.getByRole('link', { name: 'Projects' }).click();
    await expect(page).toHaveURL(/\/projects$/);
    await expect(nav).toBeHidden();
    await noSidewaysScroll(page);
  });
});

test.describe('desktop nav', () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test('shows the links without a menu button', async ({ page }) => {
    await hydrated(page, '/tasks');
    await expect(page.locator('#nav-toggle')).toBeHidden();
    await expect(page.locator('#main-nav')).toBeVisible();
  });
});

test.describe('keyboard only', () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test('/harness: Tab to a question, open the dialog, answer with 2 or by typing, Escape closes', async ({ page, request }) => {
    const errors = watchErrors(page);
    const tag = uid();
    const withOptions = await createTask(request, `Kbd options ${tag}`);
    const asked = await api(request, 'POST', '/api/internal/harness/ask', {
      taskId: withOptions, question: `Which database ${tag}?`, options: [{ label: 'Postgres' }, { label: 'SQLite' }],
    });
    expect(asked.status).toBe(200);
    const typed = await createTask(request, `Kbd typed ${tag}`);
    expect((await api(request, 'POST', '/api/internal/harness/ask', { taskId: typed, question: `Name it ${tag}?` })).status).toBe(200);
    await hydrated(page, `/harness?view=pending&q=${tag}`);
    const dialog = page.locator('#detail-dialog');

    // Open with the row's Handle button: the first option has the focus; 2 answers.
    await tabTo(page, `tr[data-task-id="${withOptions}"] button.handle`);
    await focusRingVisible(page);
    await page.keyboard.press('Enter');
    await expect(dialog).toBeVisible();
    await expect(dialog.locator('.choices .choice').first()).toBeFocused();
    await focusRingVisible(page);
    await page.keyboard.press('2');
    await expect(dialog).toBeHidden({ timeout: 10_000 });
    await expect.poll(async () => (await api(request, 'GET', `/api/harness/messages?view=all&taskId=${withOptions}`)).body.rows[0].replyText).toBe('SQLite');

    // A row itself: focus it, Enter opens the details; Tab stays inside; Escape closes.
    await tabTo(page, `tr[data-task-id="${typed}"]`);
    await page.keyboard.press('Enter');
    await expect(dialog).toBeVisible();
    for (let i = 0; i < 12; i++) {
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => !!document.activeElement?.closest('#detail-dialog'))).toBe(true);
    }
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    // Focus returns to the page (the row that opened it, or inside it).
    expect(await page.evaluate((id) => !!document.activeElement?.closest(`tr[data-task-id="${id}"]`), typed)).toBe(true);

    // Handle, type the reply, send with Ctrl+Enter.
    await tabTo(page, `tr[data-task-id="${typed}"] button.handle`);
    await page.keyboard.press('Enter');
    await expect(page.locator('#detail-reply-text')).toBeFocused();
    await page.keyboard.type('typed by keyboard');
    await page.keyboard.press('Control+Enter');
    await expect.poll(async () => (await api(request, 'GET', `/api/harness/messages?view=all&taskId=${typed}`)).body.rows[0].state).toBe('ANSWERED');
    expect((await api(request, 'GET', `/api/harness/messages?view=all&taskId=${typed}`)).body.rows[0].replyText).toBe('typed by keyboard');
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    expect(errors).toEqual([]);
  });

  test('task page: start with a prompt, reply while it waits, leave the terminal — keyboard only', async ({ page, request }) => {
    const created = await api(request, 'POST', '/api/tasks', {
      title: `Kbd task ${uid()}`, agent: { provider: 'command', command: ['sh', '-c', 'echo "prompt: $1"; exec sleep 60', 'sh'], cwd: '/tmp' },
    });
    const id = created.body.id;
    await hydrated(page, `/tasks/${id}`);
    await tabTo(page, '#start-prompt');
    await focusRingVisible(page);
    await page.keyboard.type('by keys');
    await tabTo(page, '.task-controls.full [data-action=start]');
    await focusRingVisible(page);
    await page.keyboard.press('Enter');
    const badge = page.locator('.page-head [data-run-state]');
    await expect(badge).toHaveText('running', { timeout: 10_000 });
    await expect(page.locator('#terminal .ht-term')).toContainText('prompt: by keys', { timeout: 10_000 });
    // Into the terminal and out again with Shift+Esc.
    await tabTo(page, '#terminal .ht-term [tabindex], #terminal .ht-term textarea, #terminal .ht-term');
    await page.keyboard.press('Shift+Escape');
    await expect(page.locator('#terminal-fullscreen')).toBeFocused();

    // The agent asks: the reply box next to the terminal, reached and sent by keyboard.
    expect((await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'Go on?' })).status).toBe(200);
    await expect(page.locator('#task-reply-text')).toBeVisible({ timeout: 10_000 });
    // It sits above the terminal: back from the terminal bar with Shift+Tab
    // (Tab inside the terminal goes to the agent; Shift+Esc leaves it).
    await tabTo(page, '#task-reply-text', 20, 'Shift+Tab');
    await page.keyboard.type('yes, go on');
    await tabTo(page, '#task-reply-send');
    await focusRingVisible(page);
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await api(request, 'GET', `/api/harness/messages?view=all&taskId=${id}`)).body.rows[0].replyText).toBe('yes, go on');
    await api(request, 'POST', `/api/tasks/${id}/stop`);
  });
});
