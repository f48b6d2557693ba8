// Settings → Automatic recovery against a real server (scripts/e2e.sh): the
// policy's values next to their defaults and the policy JSON box, which
// takes the card's width — not the narrow column a bare textarea is — at
// 390 and 1280 px, in English and Chinese, light and dark, with screenshots;
// a bad value is refused naming its field, and nothing changes.
import { test, expect, Browser } from '@playwright/test';
import { api } from './api';
import { STORAGE_STATE } from '../global-setup';

const SIZES = [
  { name: 'phone', viewport: { width: 390, height: 844 }, mobile: true },
  { name: 'desktop', viewport: { width: 1280, height: 900 }, mobile: false },
];

const HEADING = { en: 'Automatic recovery', zh: '自动恢复' };

for (const lang of ['en', 'zh'] as const) {
  for (const size of SIZES) {
    for (const scheme of ['light', 'dark'] as const) {
      test(`${lang} ${size.name} ${scheme}: the policy box takes the card's width`, async ({ browser }) => {
        const context = await (browser as Browser).newContext({
          storageState: STORAGE_STATE, viewport: size.viewport, isMobile: size.mobile,
          hasTouch: size.mobile, colorScheme: scheme,
        });
        const base = test.info().project.use.baseURL as string;
        await context.addCookies([{ name: 'harness_lang', value: lang, url: base }]);
        const page = await context.newPage();
        await page.goto('/settings');
        await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
        const card = page.locator('#recovery');
        await expect(card.locator('h2')).toHaveText(HEADING[lang]);
        await expect(card.locator('#recovery-values tr[data-name="crashRestartDelaySecs"]')).toBeVisible();
        const box = card.locator('#recovery-json');
        await expect(box).toHaveValue(/crashRestartDelaySecs/);
        await card.scrollIntoViewIfNeeded();
        const c = await card.boundingBox();
        const b = await box.boundingBox();
        expect(c && b).toBeTruthy();
        // The box spans the card (less its padding): a bare textarea's 20
        // columns are a fifth of the card at 1280 px.
        expect(b!.width / c!.width, `box ${b!.width} px of a ${c!.width} px card`).toBeGreaterThan(0.85);
        expect(b!.x + b!.width).toBeLessThanOrEqual(c!.x + c!.width + 0.5);
        // The save button keeps its own width.
        const button = await card.locator('#recovery-form button[type="submit"]').boundingBox();
        expect(button!.width).toBeLessThan(c!.width / 2);
        expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
        await card.screenshot({ path: test.info().outputPath(`recovery-${lang}-${size.name}-${scheme}.png`) });
        await context.close();
      });
    }
  }
}

test('a bad value is refused naming its field; nothing changes', async ({ page, request }) => {
  const before = await api(request, 'GET', '/api/settings/recovery');
  expect(before.status).toBe(200);
  await page.goto('/settings');
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  await page.locator('#recovery-json').fill('{"crashMaxPerHour": 1000}');
  await page.locator('#recovery-form button[type="submit"]').click();
  await expect(page.locator('#recovery-status')).toHaveAttribute('data-field', 'crashMaxPerHour');
  const after = await api(request, 'GET', '/api/settings/recovery');
  expect(after.body).toEqual(before.body);
});
