// A live update (any event on the page's SSE stream) refreshes the task page's
// facts and timeline, but must not remount its terminal (a reconnect, a lost
// scroll position and focus) nor wipe a reply being typed.
import { test, expect, Page } from '@playwright/test';
import { api } from './api';

async function hydrated(page: Page, path: string) {
  await page.goto(path);
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
}

test('a live update keeps the terminal connected and a half-typed reply', async ({ page, request }) => {
  const created = await api(request, 'POST', '/api/tasks', {
    title: `Live ${Date.now()}`,
    agent: { provider: 'command', command: ['sh', '-c', 'echo agent-ready; exec cat'] },
  });
  expect(created.status).toBe(201);
  const id = created.body.id;
  expect((await api(request, 'POST', `/api/tasks/${id}/start`)).status).toBeLessThan(300);
  expect((await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'Keep going?' })).status).toBeLessThan(300);
  await hydrated(page, `/tasks/${id}`);
  const term = page.locator('#terminal .ht-term');
  await expect(term).toContainText('agent-ready', { timeout: 10_000 });
  await expect(page.locator('#terminal-state')).toHaveText('connected');
  await page.fill('#task-reply-text', 'half-typed answer');
  // Mark the terminal's DOM node: a remount would replace it.
  await term.evaluate((el) => { (el as unknown as { harnessMark: string }).harnessMark = 'same'; });
  // Three live events on this task; the timeline shows each, so the page
  // has processed the ticks when the last one is visible.
  for (const n of [1, 2, 3]) {
    expect((await api(request, 'POST', '/api/internal/harness/notify', { taskId: id, message: `progress ${n}` })).status).toBeLessThan(300);
  }
  await expect(page.locator('#task-timeline')).toContainText('progress 3');
  await expect(page.locator('#task-reply-text')).toHaveValue('half-typed answer');
  expect(await term.evaluate((el) => (el as unknown as { harnessMark?: string }).harnessMark)).toBe('same');
  await expect(page.locator('#terminal-state')).toHaveText('connected');
  // The reply still goes through from the box that survived.
  await page.click('#task-reply-send');
  await expect.poll(async () => {
    const after = await api(request, 'GET', `/api/harness/messages?view=all&taskId=${id}`);
    return JSON.stringify(after.body);
  }, { timeout: 10_000 }).toContain('half-typed answer');
  // Answered: the reply box goes (the shape changed), the terminal stays.
  await expect(page.locator('#task-reply')).toHaveCount(0);
  expect(await term.evaluate((el) => (el as unknown as { harnessMark?: string }).harnessMark)).toBe('same');
});
