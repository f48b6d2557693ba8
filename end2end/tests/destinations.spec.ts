// Settings → Destinations (the aliases of `harness.destinations`,
// docs/tower-messaging.md §6.2) in a real browser against a real server: a bad
// field (an empty destination) is shown next to that field and nothing is
// stored; a good alias is listed; a notify target whose destination is the
// alias sends its test message through the gateway double (scripts/e2e.sh
// exports HARNESS_GATEWAY_DOUBLE) to the alias's chat id; the alias is
// removed. Desktop and 375 px, without horizontal scroll. Without
// JavaScript the add and remove forms still work. Every test fails on a
// browser console error other than the refused add's 400.
import { test, expect, Page } from '@playwright/test';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api } from './api';

const DOUBLE = process.env.HARNESS_GATEWAY_DOUBLE ?? '';
const uid = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

type Entry = { id?: string; alias?: string; dest: string };

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

async function noHorizontalScroll(page: Page) {
  const [scroll, client] = await page.evaluate(() => [
    document.documentElement.scrollWidth,
    document.documentElement.clientWidth,
  ]);
  expect(scroll, 'no horizontal scroll').toBeLessThanOrEqual(client);
}

for (const [name, viewport] of [['desktop', { width: 1440, height: 900 }], ['phone', { width: 375, height: 812 }]] as const) {
  test(`destination aliases: add with a field error, send through the alias, remove (${name})`, async ({ page, request }) => {
    test.setTimeout(60_000);
    await page.setViewportSize(viewport);
    const errors = watchErrors(page);
    const alias = `team-${name}-${uid()}`;
    const chat = `telegram:-100${Date.now() % 1_000_000_000}`;

    await openLive(page, '/settings');
    const card = page.locator('#destinations');
    await expect(card.locator('h2')).toHaveText('Destinations');

    // A bad field: no destination. The message is by that input.
    await page.locator('#destination-alias').fill(alias);
    await page.locator('#destination-gateway').selectOption('openclaw');
    await page.locator('#destination-platform').fill('telegram');
    await page.locator('#destination-scope').selectOption('work');
    await page.locator('#destination-label').fill(`The ${name} team`);
    await page.locator('#add-destination button[type="submit"]').click();
    const error = page.locator('#destination-dest-error');
    await expect(error).toBeVisible();
    await expect(error).toContainText('dest');
    await expect(page.locator('#destination-dest')).toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#destination-alias')).not.toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#destinations-status')).toHaveCount(0);
    const input = (await page.locator('#destination-dest').boundingBox())!;
    const box = (await error.boundingBox())!;
    expect(Math.abs(box.x - input.x), 'aligned with its input').toBeLessThan(4);
    const gap = box.y - (input.y + input.height);
    expect(gap, 'right below its input').toBeGreaterThan(-4);
    expect(gap).toBeLessThan(24);
    expect(box.x + box.width, 'no horizontal overflow').toBeLessThanOrEqual(viewport.width);
    await noHorizontalScroll(page);
    let stored = await api(request, 'GET', '/api/settings/destinations');
    expect(JSON.stringify(stored.body)).not.toContain(alias);

    // Fixed: the alias is listed and the field error is gone.
    await page.locator('#destination-dest').fill(chat);
    await page.locator('#add-destination button[type="submit"]').click();
    const row = page.locator('#destination-list li', { hasText: alias });
    await expect(row).toHaveCount(1);
    await expect(row.locator('code.dest')).toHaveText(chat);
    await expect(row).toContainText('openclaw');
    await expect(row).toContainText('telegram');
    await expect(row).toContainText(`The ${name} team`);
    await expect(error).toHaveCount(0);
    await noHorizontalScroll(page);
    stored = await api(request, 'GET', '/api/settings/destinations');
    const mine = (stored.body as Entry[]).find((d) => d.alias === alias);
    expect(mine?.dest).toBe(chat);
    expect(mine?.id).toBeTruthy();
    await expect(row).toHaveAttribute('data-key', mine!.id!);

    // A notify target whose destination is the alias: its test message goes
    // to the alias's chat id through the gateway double.
    if (DOUBLE && existsSync(DOUBLE)) {
      const dir = mkdtempSync(join(tmpdir(), 'harness-e2e-alias-'));
      const control = join(dir, 'control');
      const record = join(dir, 'sent.jsonl');
      writeFileSync(control, 'ok\n');
      expect((await api(request, 'PUT', '/api/settings/gateways', {
        openclaw: { cliPath: DOUBLE, env: { GATEWAY_DOUBLE_CONTROL: control, GATEWAY_DOUBLE_RECORD: record } },
      })).status).toBe(200);
      const label = `via-alias-${name}-${uid()}`;
      const target = await api(request, 'POST', '/api/settings/notify-targets/add', {
        label, gateway: 'openclaw', downstream: 'telegram', dest: alias, scope: 'work', active: false,
      });
      expect(target.status).toBe(200);
      await openLive(page, '/settings');
      await page.locator('#targets li', { hasText: label }).locator('button.test-target').click();
      await expect(page.locator('#test-result')).toHaveAttribute('data-state', 'DELIVERED', { timeout: 10_000 });
      const sent = readFileSync(record, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(sent.at(-1).target, 'the alias resolved to its chat id').toBe(chat);
      expect((await api(request, 'DELETE', `/api/settings/notify-targets/${target.body.id}`)).status).toBe(200);
      expect((await api(request, 'PUT', '/api/settings/gateways', {})).status).toBe(200);
    }

    // Remove.
    await page.locator('#destination-list li', { hasText: alias }).locator('button.remove-destination').click();
    await expect(page.locator('#destination-list li', { hasText: alias })).toHaveCount(0);
    stored = await api(request, 'GET', '/api/settings/destinations');
    expect(JSON.stringify(stored.body)).not.toContain(alias);
    // The one refused add (400) is logged by the browser as a failed resource.
    const refused = errors.filter((e) => e.includes('status of 400'));
    expect(refused).toHaveLength(1);
    expect(errors.filter((e) => !refused.includes(e))).toEqual([]);
  });
}

test.describe('without JavaScript', () => {
  test.use({ javaScriptEnabled: false });
  test('an alias is added and removed with plain forms', async ({ page, request }) => {
    const alias = `nojs-${uid()}`;
    await page.goto('/settings');
    await page.locator('#destination-alias').fill(alias);
    await page.locator('#destination-dest').fill('feishu:oc_nojs');
    await page.locator('#add-destination button[type="submit"]').click();
    await expect(page).toHaveURL(/\/settings/);
    const row = page.locator('#destination-list li', { hasText: alias });
    await expect(row).toHaveCount(1);
    await expect(row).toContainText('feishu:oc_nojs');
    const stored = await api(request, 'GET', '/api/settings/destinations');
    expect((stored.body as Entry[]).some((d) => d.alias === alias)).toBe(true);
    await row.locator('button.remove-destination').click();
    await expect(page).toHaveURL(/\/settings/);
    await expect(page.locator('#destination-list li', { hasText: alias })).toHaveCount(0);
  });
});
