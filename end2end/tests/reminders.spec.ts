// the Settings card for reminders / escalation / quiet hours with the
// reachability list, the wait line of an open question on /harness, and the
// analytics chart "reminders needed per answer" — at desktop and phone width.
import { test, expect } from '@playwright/test';
import { api } from './api';

test('reminder settings, the wait of an open question and the reminders chart', async ({ page, request }) => {
  const targets = await api(request, 'PUT', '/api/settings/notify-targets', {
    targets: [{ label: 'phone', gateway: 'openclaw', downstream: 'weixin', dest: 'wxid_e2e', scope: 'unattended' }],
  });
  expect(targets.status).toBe(200);
  const created = await api(request, 'POST', '/api/tasks', {
    title: 'reminders: open question',
    agent: { provider: 'command', command: ['sleep', '120'] },
  });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  const start = await api(request, 'POST', `/api/tasks/${id}/start`, {});
  expect([200, 201]).toContain(start.status);
  const ask = await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'Postgres or SQLite?' });
  expect(ask.status).toBe(200);

  for (const size of [{ width: 1440, height: 900 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(size);
    await page.goto('/settings');
    const card = page.locator('#reminders');
    await expect(card.locator('h2')).toHaveText('Reminders, escalation and quiet hours');
    await expect(card.locator('#reminders-json')).toContainText('escalateAfter');
    await expect(card.locator('li.reach[data-label="phone"]')).toContainText('nobody known to have written');
    await expect(card.locator('li.reach .warn')).toContainText('24 h');
    await card.scrollIntoViewIfNeeded();
    await page.screenshot({ path: `/tmp/remind-settings-${size.width}.png`, fullPage: true });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);

    await page.goto('/harness');
    const row = page.locator(`tr[data-task-id="${id}"]`);
    await expect(row.locator('.followup')).toContainText('waiting');
    await page.screenshot({ path: `/tmp/remind-harness-${size.width}.png`, fullPage: true });

    await page.goto('/analytics');
    await expect(page.locator('#chart-reminders svg[role="img"]')).toBeVisible();
    await expect(page.locator('#chart-reminders text.bar-label').first()).toHaveText('no reminder');
  }

  // A bad setting is refused naming its field; nothing changes.
  await page.goto('/settings');
  await page.locator('#reminders-json').fill('{"high": [], "normal": [3600], "low": [], "escalateTo": {"unattended": ["nobody"]}}');
  await page.locator('#reminders-form button[type="submit"]').click();
  await expect(page.locator('#reminders-status')).toHaveAttribute('data-field', 'escalateTo');
  await api(request, 'POST', `/api/tasks/${id}/stop`, {});
});
