// Settings → a notify target's chat language (docs/gateways.md, "Chat
// language") in a real browser against a real server: added as Chinese
// on the add form, shown on the channel's row, switched to English by the
// row's own form and stored. In English and Chinese, at 1280 px and 390 px,
// without horizontal scroll, with screenshots. Fails on a browser console
// error.
import { test, expect, Browser, Page } from '@playwright/test';
import { api } from './api';
import { STORAGE_STATE } from '../global-setup';

const uid = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

type Target = { id?: string; label: string; language?: string };

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return errors;
}

async function context(browser: Browser, width: number, locale: string) {
  const phone = width < 640;
  return browser.newContext({
    storageState: STORAGE_STATE, locale, viewport: { width, height: phone ? 844 : 900 },
    isMobile: phone, hasTouch: phone,
  });
}

for (const [width, locale] of [[1280, 'en-US'], [390, 'en-US'], [1280, 'zh-CN'], [390, 'zh-CN']] as const) {
  test(`a channel's chat language: added as Chinese, switched to English (${width} ${locale})`, async ({ browser, request }, info) => {
    test.setTimeout(60_000);
    const zh = locale === 'zh-CN';
    const ctx = await context(browser, width, locale);
    const page = await ctx.newPage();
    const errors = watchErrors(page);
    const label = `lang-${width}-${locale}-${uid()}`;
    await page.goto('/settings');
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');

    await page.locator('#target-label').fill(label);
    await page.locator('#target-gateway').selectOption('openclaw');
    await page.locator('#target-downstream').fill('telegram');
    await page.locator('#target-dest').fill(`-100${Date.now() % 1_000_000}`);
    await page.locator('#target-scope').selectOption('unattended');
    await expect(page.locator('label[for="target-language"]')).toHaveText(zh ? '聊天语言' : 'Chat language');
    await expect(page.locator('#target-language')).toHaveValue('en');
    await page.locator('#target-language').selectOption('zh');
    await page.locator('#add-target button[type="submit"]').click();

    const row = page.locator('#targets li', { hasText: label });
    await expect(row.locator('.target-language-name')).toHaveText(zh ? '中文' : '中文 (Chinese)');
    let stored = await api(request, 'GET', '/api/settings/notify-targets');
    const mine = () => (stored.body as Target[]).find((t) => t.label === label)!;
    expect(mine().language).toBe('zh');
    const form = row.locator('form.daily-report');
    await expect(form.locator('select[name="language"]')).toHaveValue('zh');
    const [scroll, client] = await page.evaluate(() => [
      document.documentElement.scrollWidth, document.documentElement.clientWidth,
    ]);
    expect(scroll, 'no horizontal scroll').toBeLessThanOrEqual(client);
    await row.scrollIntoViewIfNeeded();
    await page.locator('#notifications').screenshot({ path: info.outputPath(`language-${width}-${locale}.png`) });

    // The row's form (the daily report's, which keeps its time): back to English.
    await form.locator('select[name="language"]').selectOption('en');
    await form.locator('button.set-report').click();
    await expect(page.locator('#report-status')).toHaveText(zh ? '已保存。' : 'Saved.');
    await expect(page.locator('#targets li', { hasText: label }).locator('.target-language-name'))
      .toHaveText(zh ? 'English（英文）' : 'English');
    stored = await api(request, 'GET', '/api/settings/notify-targets');
    expect(mine().language).toBe('en');

    await api(request, 'DELETE', `/api/settings/notify-targets/${mine().id}`);
    expect(errors).toEqual([]);
    await ctx.close();
  });
}
