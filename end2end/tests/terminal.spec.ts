import { test, expect } from '@playwright/test';
import { api } from './api';

test('the task page shows the live agent terminal; typing echoes; reload shows the same screen', async ({ page, request }) => {
  const created = await api(request, 'POST', '/api/tasks', {
    title: `Terminal e2e ${Date.now()}`,
    agent: { provider: 'command', command: ['bash', '--norc', '--noprofile'], cwd: '/tmp', env: { PS1: 'e2e$ ' } },
  });
  expect(created.status).toBe(201);
  const id = created.body.id;
  const started = await api(request, 'POST', `/api/tasks/${id}/start`);
  expect(started.status).toBe(200);

  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`/tasks/${id}`);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  const term = page.locator('#terminal .ht-term');
  await expect(term).toHaveAttribute('data-state', 'connected', { timeout: 10_000 });
  await expect(term).toContainText('e2e$');
  await term.click();
  // Keys go to the terminal's hidden input once it has focus.
  await expect(term).toHaveClass(/ht-focused/);
  await page.keyboard.type('echo typed-$((40+2))');
  await page.keyboard.press('Enter');
  await expect(term).toContainText('typed-42');

  // The server's terminal model agrees.
  const screen = await api(request, 'GET', `/api/tasks/${id}/screen`);
  expect(screen.body.text).toContain('typed-42');

  // A reconnecting browser gets a snapshot of the same screen.
  await page.reload();
  await expect(page.locator('#terminal .ht-term')).toContainText('typed-42');
  await page.screenshot({ path: 'test-results/terminal-page.png', fullPage: true });
  expect(errors).toEqual([]);
  await api(request, 'POST', `/api/tasks/${id}/stop`);
});
