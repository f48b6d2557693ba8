// Approvals of risky agent steps on a phone: the held
// call is an ask with the options Approve / Deny showing the exact command,
// the task and the working directory; one tap on /harness (or on the task
// page) decides it — recorded as decided by the browser session — and a
// second answer to a decided approval says "already decided".
import { test, expect, Page, APIRequestContext } from '@playwright/test';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api } from './api';

const uid = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

test.use({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return errors;
}

async function openLive(page: Page, url: string) {
  await page.goto(url);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('header.topnav')).toHaveAttribute('data-live', 'open');
}

/** A derived task (it has a parent, so a risky call asks) and its pending
 * approval of `command`, as the pre-tool hook records it. */
async function held(request: APIRequestContext, title: string, command: string) {
  const parent = await api(request, 'POST', '/api/tasks', { title: `${title} parent`, agent: { provider: 'command', command: ['true'] } });
  expect(parent.status).toBe(201);
  const child = await api(request, 'POST', '/api/tasks', {
    title, parentTaskId: parent.body.id, agent: { provider: 'command', command: ['true'] },
  });
  expect(child.status).toBe(201);
  const taskId: string = child.body.id;
  const v = await api(request, 'POST', '/api/internal/approvals/check', {
    taskId, tool: 'Bash', input: { command }, cwd: '/srv/repo', waitSeconds: 0,
  });
  expect(v.status, JSON.stringify(v.body)).toBe(200);
  expect(v.body.waiting).toBe(true);
  return { taskId, approvalId: v.body.approvalId as string };
}

async function approval(request: APIRequestContext, id: string) {
  const r = await api(request, 'GET', `/api/approvals/${id}`);
  expect(r.status).toBe(200);
  return r.body;
}

test('one tap on Approve in /harness decides the held call', async ({ page, request }, info) => {
  const errors = watchErrors(page);
  const title = `Approve ${uid()}`;
  const { taskId, approvalId } = await held(request, title, 'git push --force origin main');
  await openLive(page, `/harness?view=pending&q=${encodeURIComponent(title)}`);
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  // The exact command, the task and the working directory are on the row.
  await expect(row).toContainText('$ git push --force origin main');
  await expect(row).toContainText(`Task: ${title}`);
  await expect(row).toContainText('Working directory: /srv/repo');
  const approve = row.locator('.choice[data-label="Approve"]');
  const deny = row.locator('.choice[data-label="Deny"]');
  await expect(approve).toBeVisible();
  await expect(deny).toBeVisible();
  // Big enough to tap, and its label readable (not white on white).
  const box = await approve.boundingBox();
  expect(box && box.height >= 36 && box.width >= 80, JSON.stringify(box)).toBeTruthy();
  const [fg, bg] = await approve.evaluate((el) => {
    const s = getComputedStyle(el);
    return [s.color, s.backgroundColor];
  });
  expect(fg).not.toBe(bg);
  await page.screenshot({ path: info.outputPath('approval-phone.png'), fullPage: true });
  await approve.tap();
  await expect(row.locator('.choice-armed')).toContainText('Approve');
  await expect(row).toHaveCount(0, { timeout: 10_000 }); // left the pending view
  await expect(page.locator('#reply-status')).toBeVisible();
  const a = await approval(request, approvalId);
  expect(a.state).toBe('APPROVED');
  // Who: the UI session (a prefix of its stored hash, never its id); where: the UI.
  expect(a.decidedBy).toMatch(/^browser:session:[0-9a-f]{12}$/);
  expect(a.decidedVia).toBe('ui');
  await page.screenshot({ path: info.outputPath('approval-phone-after.png'), fullPage: true });
  expect(errors).toEqual([]);
});

test('a Chinese page shows the approval in Chinese; 批准 still sends Approve', async ({ page, request }, info) => {
  const errors = watchErrors(page);
  const title = `审批 ${uid()}`;
  const { taskId, approvalId } = await held(request, title, 'git push --force origin main');
  await page.goto('/harness');
  const host = new URL(page.url()).hostname;
  await page.context().addCookies([{ name: 'harness_lang', value: 'zh', domain: host, path: '/' }]);
  await openLive(page, `/harness?view=pending&q=${encodeURIComponent(title)}`);
  await expect(page.locator('html')).toHaveAttribute('lang', /^zh/);
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  // The words around the call are Chinese; the call is as the agent wrote it.
  await expect(row).toContainText('批准这次 Bash 调用吗？');
  await expect(row).toContainText('$ git push --force origin main');
  await expect(row).toContainText(`任务：${title}`);
  await expect(row).toContainText('工作目录：/srv/repo');
  await expect(row).not.toContainText('Approve this');
  const approve = row.locator('.choice[data-label="Approve"]');
  await expect(approve).toContainText('批准');
  await expect(approve).toHaveAttribute('title', /只运行这一次调用/);
  await expect(row.locator('.choice[data-label="Deny"]')).toContainText('拒绝');
  // The dialog shows the same.
  await row.locator('button.details').click();
  await expect(page.locator('#detail-sent')).toContainText('批准这次 Bash 调用吗？');
  await expect(page.locator('#detail-sent')).toContainText('工作目录：/srv/repo');
  await page.keyboard.press('Escape');
  await page.screenshot({ path: info.outputPath('approval-phone-zh.png'), fullPage: true });
  await approve.tap();
  await expect(row.locator('.choice-armed')).toContainText('批准');
  await expect(row).toHaveCount(0, { timeout: 10_000 });
  const a = await approval(request, approvalId);
  expect(a.state).toBe('APPROVED');
  expect(errors).toEqual([]);
});

test('an answer to an approval decided meanwhile says "already decided"', async ({ page, request }, info) => {
  const errors = watchErrors(page);
  const title = `Decided ${uid()}`;
  const { taskId, approvalId } = await held(request, title, 'rm -rf build');
  await openLive(page, `/harness?view=all&q=${encodeURIComponent(title)}`);
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  await row.locator('.choice[data-label="Deny"]').tap();
  await expect(row.locator('.choice-armed')).toContainText('Deny');
  // Someone else (a script with the admin token) decides during the undo window.
  const d = await api(request, 'POST', `/api/approvals/${approvalId}/decide`, { decision: 'approve' });
  expect(d.status).toBe(200);
  const status = page.locator('#reply-status');
  await expect(status).toContainText('already decided: APPROVED by admin', { timeout: 10_000 });
  await expect(status).toHaveAttribute('role', 'alert');
  await page.screenshot({ path: info.outputPath('approval-already-decided.png'), fullPage: true });
  const a = await approval(request, approvalId);
  expect(a.state).toBe('APPROVED');
  expect(a.decidedBy).toBe('admin');
  expect(errors.filter((e) => !e.includes('409'))).toEqual([]);
});

test('the task page: one tap on Deny decides the held call', async ({ page, request }, info) => {
  const errors = watchErrors(page);
  const title = `Task page approval ${uid()}`;
  const { taskId, approvalId } = await held(request, title, 'git reset --hard HEAD~3');
  await openLive(page, `/tasks/${taskId}`);
  const item = page.locator('#task-timeline li[data-status="pending"]');
  await expect(item).toContainText('$ git reset --hard HEAD~3');
  // While it waits, the task says it waits for an approval; the audit line
  // names the rule that matched and the working directory.
  await expect(page.locator('#task-approvals [data-waiting-approval]')).toHaveText('waiting for approval');
  // The header too (it said "waiting for you").
  await expect(page.locator('.page-head [data-run-state]')).toHaveText('waiting for approval');
  await expect(page.locator('.page-head [data-run-state]')).toHaveAttribute('data-waiting-approval', 'true');
  const pending = page.locator(`#task-approvals li[data-approval-id="${approvalId}"] [data-rule]`);
  await expect(pending).toContainText('"git reset --hard*" → ask (builtin #3)');
  await expect(pending).toContainText('/srv/repo');
  await expect(item).toContainText('Working directory: /srv/repo');
  await item.locator('.choice[data-label="Deny"]').tap();
  await expect(page.locator('#task-timeline li[data-status="answered"]')).toBeVisible({ timeout: 10_000 });
  const a = await approval(request, approvalId);
  expect(a.state).toBe('DENIED');
  expect(a.decidedBy).toMatch(/^browser:session:[0-9a-f]{12}$/);
  expect(a.decidedVia).toBe('ui');
  // The task page's audit: the call, its state, who decided via where.
  const line = page.locator(`#task-approvals li[data-approval-id="${approvalId}"]`);
  await expect(line).toHaveAttribute('data-state', 'DENIED', { timeout: 10_000 });
  await expect(line).toContainText('git reset --hard HEAD~3');
  await expect(line).toContainText(`${a.decidedBy} via ui`);
  await expect(page.locator('#task-approvals [data-waiting-approval]')).toHaveCount(0);
  await page.locator('#task-approvals').screenshot({ path: info.outputPath('task-approvals.png') });
  // Known on the task page (see choices.spec.ts): a live answer disposes a value.
  const known = (e: string) => e.includes('already been disposed') || e === 'unreachable';
  expect(errors.filter((e) => !known(e))).toEqual([]);
});

// Last: it changes the global policy (and puts the built-in rules back).
test('Settings: the global policy is edited as JSON; an error names the rule and its field', async ({ page, request }, info) => {
  const errors = watchErrors(page);
  await openLive(page, '/settings');
  const section = page.locator('#approvals');
  await expect(section.locator('#policy-source')).toContainText('built-in');
  const rules = section.locator('#policy-rules');
  await expect(rules).toHaveValue(/git push\*/);
  await section.scrollIntoViewIfNeeded();
  await page.screenshot({ path: info.outputPath('policy-editor.png'), fullPage: true });
  await rules.fill(JSON.stringify({ rules: [
    { tool: 'Bash', pattern: 'terraform apply*', action: 'ask' },
    { tool: ' ', action: 'deny' },
  ] }));
  await section.getByRole('button', { name: 'Save', exact: true }).click();
  const status = section.locator('#policy-status');
  await expect(status).toContainText('rules[1]');
  await expect(status).toHaveAttribute('data-field', 'tool');
  await expect(status).toHaveAttribute('role', 'alert');
  await section.screenshot({ path: info.outputPath('policy-error.png') });
  let g = await api(request, 'GET', '/api/settings/approval-policy');
  expect(g.body.builtin).toBe(true);
  await rules.fill(JSON.stringify({ rules: [{ tool: 'Bash', pattern: 'terraform apply*', action: 'ask' }] }));
  await section.getByRole('button', { name: 'Save', exact: true }).click();
  await expect(section.locator('#policy-source')).toContainText('stored', { timeout: 10_000 });
  g = await api(request, 'GET', '/api/settings/approval-policy');
  expect(g.body.builtin).toBe(false);
  expect(g.body.rules).toEqual([{ tool: 'Bash', pattern: 'terraform apply*', action: 'ask' }]);
  await section.getByRole('button', { name: 'Back to the built-in rules' }).click();
  await expect(section.locator('#policy-source')).toContainText('built-in', { timeout: 10_000 });
  g = await api(request, 'GET', '/api/settings/approval-policy');
  expect(g.body.builtin).toBe(true);
  expect(errors.filter((e) => !e.includes('400 (Bad Request)'))).toEqual([]); // the refused save
});

test('a project\'s own approval rules are edited on its edit form at phone width', async ({ page, request }, info) => {
  const errors = watchErrors(page);
  const path = mkdtempSync(join(tmpdir(), 'harness-policy-'));
  const name = `policy-${uid()}`;
  const created = await api(request, 'POST', '/api/projects', { name, path });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id: string = created.body.id;
  await page.goto('/projects');
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await page.locator(`tr[data-project-id="${id}"]`).getByRole('button', { name: `Edit ${name}`, exact: true }).click();
  const section = page.locator('#project-approvals');
  await expect(section).toBeVisible();
  const rules = page.locator('#project-policy-rules');
  await expect(rules).toHaveValue(/"rules": \[\]/);
  // A bad rule: refused naming the rule and its field, nothing stored.
  await rules.fill(JSON.stringify({ rules: [{ tool: 'Bash', pattern: 'terraform apply*', action: 'ask' }, { tool: ' ', action: 'deny' }] }));
  await page.locator('#project-policy-save').click();
  const status = page.locator('#project-policy-status');
  await expect(status).toContainText('rules[1]');
  await expect(status).toHaveAttribute('data-field', 'tool');
  expect((await api(request, 'GET', `/api/projects/${id}/approval-policy`)).body).toEqual({ rules: [] });
  // A good one is stored and is what the project's tasks are held by.
  const mine = { rules: [{ tool: 'Bash', pattern: 'terraform apply*', action: 'ask', note: 'changes production' }] };
  await rules.fill(JSON.stringify(mine, null, 2));
  await page.locator('#project-policy-save').click();
  await expect(status).toContainText('Saved');
  expect((await api(request, 'GET', `/api/projects/${id}/approval-policy`)).body).toEqual(mine);
  await expect(rules).toHaveValue(/terraform apply\*/);
  // Fits the phone: no sideways scroll, the textarea inside the viewport.
  const [scroll, inner] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(scroll).toBeLessThanOrEqual(inner);
  const box = await rules.boundingBox();
  expect(box && box.x >= 0 && box.x + box.width <= 390, JSON.stringify(box)).toBeTruthy();
  await section.scrollIntoViewIfNeeded();
  await page.screenshot({ path: info.outputPath('project-policy-phone.png'), fullPage: true });
  expect(errors.filter((e) => !e.includes('400 (Bad Request)'))).toEqual([]); // the refused save
});
