// /analytics: how long agents wait for humans, drawn as SVG charts, at desktop and
// phone width, in both languages.
import { test, expect } from '@playwright/test';
import { api } from './api';

test('analytics shows answer times and open questions as charts', async ({ page, request }) => {
  const created = await api(request, 'POST', '/api/tasks', {
    title: 'analytics: open question',
    agent: { provider: 'command', command: ['sleep', '120'] },
  });
  expect(created.status).toBe(201);
  const asked: string = created.body.id;
  // A question needs a running execution: start the (short) command agent and ask.
  const start = await api(request, 'POST', `/api/tasks/${asked}/start`, {});
  expect([200, 201]).toContain(start.status);
  const ask = await api(request, 'POST', '/api/internal/harness/ask', { taskId: asked, question: 'Which way?' });
  expect(ask.status).toBe(200);
  // Leave no agent running for the other specs once the page is checked.
  test.info().annotations.push({ type: 'task', description: asked });

  for (const size of [{ width: 1440, height: 900 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(size);
    await page.goto('/analytics');
    await expect(page.locator('h1')).toHaveText('How long agents wait for you');
    const ages = page.locator('#chart-ages');
    await expect(ages.locator('svg[role="img"]')).toBeVisible();
    await expect(ages.locator('text.bar-label').first()).toHaveText('under 1 h');
    expect(Number(await ages.locator('text.bar-value').first().textContent())).toBeGreaterThanOrEqual(1);
    await expect(page.locator('#chart-projects')).toBeVisible();
    // No horizontal page scroll.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
  }

  // Chinese.
  await page.context().addCookies([{ name: 'harness_lang', value: 'zh', url: page.url() }]);
  await page.goto('/analytics');
  await expect(page.locator('h1')).toHaveText('智能体等你多久');
  await expect(page.locator('#chart-ages text.bar-label').first()).toHaveText('1 小时内');
  await api(request, 'POST', `/api/tasks/${asked}/stop`, {});
});
