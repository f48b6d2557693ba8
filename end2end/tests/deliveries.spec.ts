import { test, expect } from '@playwright/test';
import { mkdtempSync, mkdirSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api } from './api';

// A reply's delivery into the agent's terminal, shown live under the reply.
test('the task page follows a reply from "waiting for the turn" to "typed into the terminal"', async ({ page, request }) => {
  // Busy for ~3 s (no input boundary), then reads lines.
  const script = 'i=0; while [ $i -lt 30 ]; do echo busy; sleep 0.1; i=$((i+1)); done; while IFS= read -r l; do echo "got $l"; done';
  const created = await api(request, 'POST', '/api/tasks', {
    title: `Delivery e2e ${Date.now()}`,
    agent: { provider: 'command', command: ['sh', '-c', script], cwd: '/tmp' },
  });
  expect(created.status).toBe(201);
  const id = created.body.id;
  expect((await api(request, 'POST', `/api/tasks/${id}/start`)).status).toBe(200);
  expect((await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'Which color?' })).status).toBe(200);

  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push('console: ' + m.text()); });
  await page.goto(`/tasks/${id}`);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('header.topnav')).toHaveAttribute('data-live', 'open');

  const reply = api(request, 'POST', '/api/internal/harness/reply', { taskId: id, text: 'teal' });
  const line = page.locator('#task-timeline .delivery');
  await expect(line).toHaveAttribute('data-delivery-state', /QUEUED|WAITING_BOUNDARY/, { timeout: 10_000 });
  await expect(line).toContainText(/waiting for the agent to finish its turn|queued for the terminal/);
  expect((await reply).status).toBe(200);
  await expect(line).toHaveAttribute('data-delivery-state', 'DELIVERED', { timeout: 15_000 });
  await expect(line).toContainText(/typed into the terminal \d\d:\d\d/);
  // No wasm panic while the page reloads live around the answer (a resource
  // disposed under a pending Suspend used to abort the wasm: "unreachable").
  expect(errors).toEqual([]);
  await api(request, 'POST', `/api/tasks/${id}/stop`);
});

test('a delivery that cannot be made shows the reason and a retry that works once fixed', async ({ page, request }) => {
  const base = mkdtempSync(join(tmpdir(), 'harness-e2e-'));
  const cwd = join(base, 'work');
  mkdirSync(cwd);
  const first = join(base, 'first-run');
  // Exits at once the first time; afterwards draws a prompt (as a real agent
  // draws its screen, which a restart waits for) and reads lines.
  const script = `test -f '${first}' || { touch '${first}'; exit 0; }; echo ready; while IFS= read -r l; do echo "got $l"; done`;
  const created = await api(request, 'POST', '/api/tasks', {
    title: `Failed delivery e2e ${Date.now()}`,
    agent: { provider: 'command', command: ['sh', '-c', script], cwd },
  });
  const id = created.body.id;
  expect((await api(request, 'POST', `/api/tasks/${id}/start`)).status).toBe(200);
  await expect.poll(async () => (await api(request, 'GET', `/api/tasks/${id}`)).body.execution?.status).toBe('COMPLETED');
  expect((await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'Which file?' })).status).toBe(200);
  rmdirSync(cwd); // the agent cannot start again

  await page.goto(`/tasks/${id}`);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('header.topnav')).toHaveAttribute('data-live', 'open');
  expect((await api(request, 'POST', '/api/internal/harness/reply', { taskId: id, text: 'main.rs' })).status).toBe(200);
  const line = page.locator('#task-timeline .delivery');
  await expect(line).toHaveAttribute('data-delivery-state', 'FAILED', { timeout: 10_000 });
  await expect(line).toContainText('failed: cannot restart the agent');
  mkdirSync(cwd);
  await line.locator('button.delivery-retry').click();
  await expect(line).toHaveAttribute('data-delivery-state', 'DELIVERED', { timeout: 15_000 });
  await expect(line).toContainText('typed into the terminal');
  await api(request, 'POST', `/api/tasks/${id}/stop`);
});
