// Settings → a notify target's daily report (docs/morning-report.md, "Daily,
// per notify target") in a real browser against a real server: an unknown
// time zone is shown next to its field and nothing is stored; a good time
// and zone are stored and shown on the channel's row; the row's own form
// moves the time, then switches the report off. At 1280 px and 390 px,
// without horizontal scroll, with screenshots. Fails on a browser console
// error other than the refused add's 400.
import { test, expect, Page } from '@playwright/test';
import { api } from './api';

const uid = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

type Target = { id?: string; label: string; reportAt?: string; reportTimeZone?: string; reportSince?: string };

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return errors;
}

async function noHorizontalScroll(page: Page) {
  const [scroll, client] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  expect(scroll, 'no horizontal scroll').toBeLessThanOrEqual(client);
}

for (const [name, viewport] of [['desktop', { width: 1280, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
  test(`a channel's daily report: a bad zone by its field, set, moved, off (${name})`, async ({ page, request }, info) => {
    test.setTimeout(60_000);
    await page.setViewportSize(viewport);
    const errors = watchErrors(page);
    const label = `morning-${name}-${uid()}`;
    await page.goto('/settings');
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');

    await page.locator('#target-label').fill(label);
    await page.locator('#target-gateway').selectOption('openclaw');
    await page.locator('#target-downstream').fill('telegram');
    await page.locator('#target-dest').fill(`-100${Date.now() % 1_000_000}`);
    await page.locator('#target-scope').selectOption('unattended');
    await page.locator('#target-reportAt').fill('07:30');
    await page.locator('#target-reportTimeZone').fill('Mars/Olympus');
    await page.locator('#add-target button[type="submit"]').click();
    const error = page.locator('#target-reportTimeZone-error');
    await expect(error).toBeVisible();
    await expect(error).toContainText('Mars/Olympus');
    await expect(page.locator('#target-reportTimeZone')).toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#target-reportAt')).not.toHaveAttribute('aria-invalid', 'true');
    await noHorizontalScroll(page);
    await page.locator('#notifications').screenshot({ path: info.outputPath(`zone-error-${name}.png`) });
    let stored = await api(request, 'GET', '/api/settings/notify-targets');
    expect(JSON.stringify(stored.body)).not.toContain(label);

    // Fixed: stored with its schedule, shown on its row.
    await page.locator('#target-reportTimeZone').fill('Europe/Berlin');
    await page.locator('#add-target button[type="submit"]').click();
    const row = page.locator('#targets li', { hasText: label });
    await expect(row.locator('.daily-summary')).toHaveText('daily report at 07:30 (Europe/Berlin)');
    await expect(error).toHaveCount(0);
    stored = await api(request, 'GET', '/api/settings/notify-targets');
    const mine = () => (stored.body as Target[]).find((t) => t.label === label)!;
    expect(mine().reportAt).toBe('07:30');
    expect(mine().reportTimeZone).toBe('Europe/Berlin');
    expect(mine().reportSince).toBeTruthy();
    await noHorizontalScroll(page);
    await row.scrollIntoViewIfNeeded();
    await page.locator('#notifications').screenshot({ path: info.outputPath(`set-${name}.png`) });

    // The row's form: another time and zone, then off (no time).
    const form = row.locator('form.daily-report');
    await expect(form.locator('input[name="report_at"]')).toHaveValue('07:30');
    await form.locator('input[name="report_at"]').fill('06:45');
    await form.locator('input[name="report_time_zone"]').fill('Asia/Shanghai');
    await form.locator('button.set-report').click();
    await expect(row.locator('.daily-summary')).toHaveText('daily report at 06:45 (Asia/Shanghai)');
    await expect(page.locator('#report-status')).toHaveText('Saved.');
    stored = await api(request, 'GET', '/api/settings/notify-targets');
    expect(mine().reportAt).toBe('06:45');
    const form2 = page.locator('#targets li', { hasText: label }).locator('form.daily-report');
    await form2.locator('input[name="report_at"]').fill('');
    await form2.locator('button.set-report').click();
    await expect(page.locator('#targets li', { hasText: label }).locator('.daily-summary')).toHaveText('no daily report');
    stored = await api(request, 'GET', '/api/settings/notify-targets');
    expect(mine().reportAt).toBeUndefined();
    expect(mine().reportSince).toBeUndefined();
    await noHorizontalScroll(page);

    // Clean up: the channel is removed.
    await api(request, 'DELETE', `/api/settings/notify-targets/${mine().id}`);
    expect(errors.filter((e) => !e.includes('400'))).toEqual([]);
  });
}
