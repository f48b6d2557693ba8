// The task-list page (/projects/:id/plan): a real harness-tasks.json made by the
// real `harness` CLI in a temp git repository; the page shows the dependency tree,
// statuses and the progress-log tail, and follows CLI changes without a reload.
import { test, expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api } from './api';

const HARNESS =
  process.env.HARNESS_BIN ??
  join(process.env.CARGO_TARGET_DIR ?? join(__dirname, '..', '..', 'target'), 'debug', 'harness');

function run(cwd: string, cmd: string, args: string[]): string {
  const env = { ...process.env };
  for (const k of ['HARNESS_STATE_ROOT', 'HARNESS_TASK_ID', 'HARNESS_WORKER_ID', 'HARNESS_SERVER_URL']) delete env[k];
  return execFileSync(cmd, args, {
    cwd,
    env: { ...env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' },
    encoding: 'utf8',
  });
}
const harness = (cwd: string, ...args: string[]) => run(cwd, HARNESS, args);

async function project(request: Parameters<typeof api>[0], name: string, path: string): Promise<string> {
  const created = await api(request, 'POST', '/api/projects', { name, path });
  expect(created.status).toBe(201);
  return created.body.id;
}

test('the task list page shows the tree, statuses and log tail, and follows the CLI live', async ({ page, request }) => {
  const dir = mkdtempSync(join(tmpdir(), 'harness-plan-e2e-'));
  try {
    run(dir, 'git', ['init', '-q', '-b', 'main']);
    writeFileSync(join(dir, 'README'), 'x\n');
    run(dir, 'git', ['add', 'README']);
    run(dir, 'git', ['commit', '-qm', 'base']);
    harness(dir, 'init');
    harness(dir, 'add', 'Base layer', '--validate', 'true', '--priority', 'P0');
    harness(dir, 'add', 'Parser', '--depends-on', 'task-001', '--validate', 'true');
    harness(dir, 'add', 'Printer', '--depends-on', 'task-002', '--validate', 'true');
    harness(dir, 'task', 'claim', '--task', 'task-001', '--worker-id', 'e2e');
    harness(dir, 'task', 'complete', 'task-001', '--worker-id', 'e2e');
    const id = await project(request, `Plan e2e ${Date.now()}`, dir);

    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // Reached from the navigation and the projects list.
    await page.goto('/projects');
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
    await page.locator(`tr[data-project-id="${id}"] a.plan-link`).click();
    await expect(page).toHaveURL(new RegExp(`/projects/${id}/plan$`));
    await expect(page.locator('#plan-title')).toContainText('Task list');

    const row = (task: string) => page.locator(`#plan-tree tr[data-task-id="${task}"]`);
    await expect(row('task-001')).toHaveAttribute('data-depth', '0');
    await expect(row('task-002')).toHaveAttribute('data-depth', '1');
    await expect(row('task-003')).toHaveAttribute('data-depth', '2');
    await expect(row('task-001')).toHaveAttribute('data-status', 'completed');
    await expect(row('task-001').locator('.badge').first()).toHaveText('completed');
    await expect(row('task-002')).toHaveAttribute('data-status', 'pending');
    await expect(row('task-003').locator('.waiting-on')).toContainText('task-002');
    await expect(page.locator('#plan-counts li[data-status="completed"] strong')).toHaveText('1');
    await expect(page.locator('#plan-next')).toContainText('task-002');
    await expect(page.locator('#plan-log')).toContainText('Completed [task-001]');
    // After `init` the loop is on but nothing runs; every
    // task has a validation command, so no warning.
    await expect(page.locator('#plan-loop')).toHaveAttribute('data-loop', 'idle');
    await expect(page.locator('#plan-no-validation')).toHaveCount(0);

    // Changes made through the CLI appear without a reload.
    await page.evaluate(() => ((window as any).__noReload = true));
    harness(dir, 'task', 'claim', '--task', 'task-002', '--worker-id', 'e2e-worker');
    await expect(row('task-002')).toHaveAttribute('data-status', 'in_progress', { timeout: 10_000 });
    await expect(page.locator('#plan-loop')).toHaveAttribute('data-loop', 'running');
    await expect(row('task-002').locator('.claimed-by')).toHaveText('e2e-worker');
    await expect(page.locator('#plan-log li').last()).toContainText('Starting [task-002]');
    harness(dir, 'task', 'fail', 'task-002', '--category', 'TEST_FAIL', '--message', 'parser tests failed', '--worker-id', 'e2e-worker');
    await expect(row('task-002')).toHaveAttribute('data-status', 'failed', { timeout: 10_000 });
    await expect(row('task-002').locator('.attempts')).toHaveText('1/3');
    await expect(row('task-002').locator('.err-cat')).toHaveText('TEST_FAIL');
    await expect(row('task-002').locator('.err-msg')).toHaveText('parser tests failed');
    await expect(page.locator('#plan-log')).toContainText('ROLLBACK [task-002]');
    expect(await page.evaluate(() => (window as any).__noReload)).toBe(true);
    await page.screenshot({ path: 'test-results/plan-page.png', fullPage: true });

    // The permanently failed dependency blocks its dependent.
    harness(dir, 'task', 'claim', '--task', 'task-002', '--worker-id', 'e2e-worker');
    harness(dir, 'task', 'fail', 'task-002', '--category', 'DEPENDENCY', '--message', 'gave up', '--worker-id', 'e2e-worker');
    await expect(row('task-003')).toHaveAttribute('data-blocked', 'true', { timeout: 10_000 });
    await expect(row('task-003').locator('.blocked-by')).toContainText('task-002');
    // A task without a validation command can never complete: the page says so.
    harness(dir, 'add', 'Docs');
    await expect(page.locator('#plan-no-validation')).toContainText('task-004', { timeout: 10_000 });
    expect(errors).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a directory without a task list and a corrupt one are shown as such', async ({ page, request }) => {
  const dir = mkdtempSync(join(tmpdir(), 'harness-plan-e2e-'));
  try {
    const id = await project(request, `Empty e2e ${Date.now()}`, dir);
    await page.goto(`/projects/${id}/plan`);
    await expect(page.locator('#plan-missing')).toContainText('harness init');
    writeFileSync(join(dir, 'harness-tasks.json'), '{"version": 2, "tasks": [');
    await expect(page.locator('#plan-error')).toContainText('[CONFIG]', { timeout: 10_000 });
    await expect(page.locator('#plan-error')).toContainText('invalid JSON at line 1');
    // The same view through the REST API.
    const rest = await api(request, 'GET', `/api/projects/${id}/plan`);
    expect(rest.status).toBe(200);
    expect(rest.body.state).toBe('error');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a progress log linked out of the project is refused, and the page says so', async ({ page, request }) => {
  const dir = mkdtempSync(join(tmpdir(), 'harness-plan-e2e-'));
  const outside = mkdtempSync(join(tmpdir(), 'harness-secret-'));
  try {
    writeFileSync(join(outside, 'admin.token'), 'TOP-SECRET-TOKEN\n');
    writeFileSync(join(dir, 'harness-tasks.json'), '{"version": 2, "tasks": []}');
    symlinkSync(join(outside, 'admin.token'), join(dir, 'harness-progress.txt'));
    const id = await project(request, `Symlink e2e ${Date.now()}`, dir);
    await page.goto(`/projects/${id}/plan`);
    await expect(page.locator('#plan-error')).toContainText('[SECURITY] harness-progress.txt');
    // Any link is refused (opened once with O_NOFOLLOW: no check-then-read race).
    await expect(page.locator('#plan-error')).toContainText('is a link');
    expect(await page.content()).not.toContain('TOP-SECRET-TOKEN');
    // Relative project paths are refused at registration.
    const relative = await api(request, 'POST', '/api/projects', { name: `Rel ${Date.now()}`, path: '../../../../etc' });
    expect(relative.status).toBe(400);
    expect(relative.body.field).toBe('path');
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(outside, { recursive: true, force: true });
  }
});
