// a newcomer's first step. Home leads with "Create your
// first task"; the demo agent asks a question with options at once; answering
// it on the task page (the question is in the reply box) resumes the agent,
// which prints the answer in its terminal. On a phone, by tapping.
import { test, expect } from '@playwright/test';
import { api } from './api';
import { STORAGE_STATE } from '../global-setup';

test('phone: the demo agent asks, a tap answers, the agent goes on with it', async ({ browser, request }) => {
  test.setTimeout(60_000);
  const ctx = await browser.newContext({
    storageState: STORAGE_STATE, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true,
  });
  const page = await ctx.newPage();
  await page.goto('/');
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  const start = page.getByRole('button', { name: 'Try it with a demo agent' });
  await expect(start).toBeVisible();
  // On the first screen, without scrolling.
  const box = await start.boundingBox();
  expect((box?.y ?? 9999) + (box?.height ?? 0)).toBeLessThanOrEqual(844);
  await page.screenshot({ path: test.info().outputPath('home-first-step.png') });
  await start.tap();
  // Other agents are busy meanwhile: a live update redraws Home's cards
  // while the demo starts (it once lost the way to the task page).
  for (let i = 0; i < 3; i++) {
    await api(request, 'POST', '/api/tasks', { title: `Busy ${Date.now()}-${i}`, agent: { provider: 'command', command: ['true'] } });
  }
  await expect(page).toHaveURL(/\/tasks\/c[a-z0-9]+$/, { timeout: 10_000 });
  const id = page.url().split('/').pop()!;

  // The reply box shows the question and its options.
  const reply = page.locator('#task-reply');
  await expect(reply.locator('#task-reply-question')).toContainText('Which database', { timeout: 15_000 });
  await page.screenshot({ path: test.info().outputPath('demo-question.png'), fullPage: true });
  await reply.getByRole('button', { name: /SQLite/ }).tap();
  await expect(page.locator('#terminal .ht-term')).toContainText('You answered: SQLite', { timeout: 20_000 });
  await page.screenshot({ path: test.info().outputPath('demo-answered.png'), fullPage: true });
  const m = await api(request, 'GET', `/api/harness/messages?view=all&taskId=${id}`);
  expect(m.body.rows[0].replyText).toBe('SQLite');
  await ctx.close();
});
