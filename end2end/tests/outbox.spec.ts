// Settings → Notifications and the durable outbox in a real browser against
// a real server and the gateway CLI double (scripts/e2e.sh exports its path
// as HARNESS_GATEWAY_DOUBLE): a bad field of "add a target" is shown next
// to that field; a good target through the double; "send a test message"
// reaches DELIVERED; a pushed message the double fails shows FAILED with
// its attempts, last error and "retry now", which sends it again. Desktop
// and 390 px. Every test fails on a browser console error other than the
// refused add's 400.
import { test, expect, Page } from '@playwright/test';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, createTask } from './api';

const DOUBLE = process.env.HARNESS_GATEWAY_DOUBLE ?? '';
const uid = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;

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

for (const [name, viewport] of [['desktop', { width: 1440, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
  test(`notify targets, test message and a failed send through the gateway double (${name})`, async ({ page, request }) => {
    test.skip(!DOUBLE || !existsSync(DOUBLE), 'the gateway double is not built (cargo build -p server --bin harness-gateway-double)');
    test.setTimeout(90_000);
    await page.setViewportSize(viewport);
    const errors = watchErrors(page);
    const dir = mkdtempSync(join(tmpdir(), 'harness-e2e-gateway-'));
    const control = join(dir, 'control');
    writeFileSync(control, 'ok\n');

    await openLive(page, '/settings');
    // The OpenClaw CLI is the double; its behaviour is read from `control`.
    const gw = page.locator('#gateway-openclaw');
    await gw.locator('#gw-openclaw-cli').fill(DOUBLE);
    await gw.locator('#gw-openclaw-env').fill(`GATEWAY_DOUBLE_CONTROL=${control}\nGATEWAY_DOUBLE_RECORD=${join(dir, 'sent.jsonl')}`);
    await gw.locator('button[type="submit"]').click();
    await expect(gw.locator('[role="status"]')).toBeVisible();

    // A bad field: OpenClaw without its platform. The message is by that input.
    const label = `e2e-${name}-${uid()}`;
    await page.locator('#target-label').fill(label);
    await page.locator('#target-gateway').selectOption('openclaw');
    await page.locator('#target-scope').selectOption('work');
    await page.locator('#target-dest').fill('-1001234567');
    await page.locator('#add-target button[type="submit"]').click();
    const error = page.locator('#target-downstream-error');
    await expect(error).toBeVisible();
    await expect(error).toContainText('platform');
    await expect(page.locator('#target-downstream')).toHaveAttribute('aria-invalid', 'true');
    await expect(page.locator('#settings-status')).toHaveCount(0);
    const input = (await page.locator('#target-downstream').boundingBox())!;
    const box = (await error.boundingBox())!;
    expect(Math.abs(box.x - input.x), 'aligned with its input').toBeLessThan(4);
    const gap = box.y - (input.y + input.height);
    expect(gap, 'right below its input').toBeGreaterThan(-4);
    expect(gap).toBeLessThan(24);
    expect(box.x + box.width, 'no horizontal overflow').toBeLessThanOrEqual(viewport.width);
    let stored = await api(request, 'GET', '/api/settings/notify-targets');
    expect(JSON.stringify(stored.body)).not.toContain(label);

    // Fixed: the target is added and the field error is gone.
    await page.locator('#target-downstream').fill('telegram');
    await page.locator('#add-target button[type="submit"]').click();
    const row = page.locator('#targets li', { hasText: label });
    await expect(row).toHaveCount(1);
    await expect(error).toHaveCount(0);
    // The form is empty again for the next channel.
    await expect(page.locator('#target-label')).toHaveValue('');
    await expect(page.locator('#target-downstream')).toHaveValue('');

    // "Send a test message" goes through the real outbox and the double.
    await row.locator('button.test-target').click();
    await expect(page.locator('#test-result')).toHaveAttribute('data-state', 'DELIVERED', { timeout: 10_000 });
    await expect(page.locator('#test-result .badge')).toBeVisible();

    // A pushed message the double fails: FAILED, attempts, last error, "retry now".
    writeFileSync(control, 'fail\n');
    const taskId = await createTask(request, `Outbox ${name} ${uid()}`);
    const pushed = await api(request, 'POST', '/api/internal/harness/outbound', {
      taskId, message: `Status of ${label}`, scope: 'work',
      gateway: 'openclaw', downstream: 'telegram', dest: '-1001234567',
    });
    expect(pushed.status).toBe(200);
    expect(pushed.body.state).toBe('FAILED');
    await openLive(page, '/harness?view=all');
    const line = page.locator(`tr[data-task-id="${taskId}"] .outbound`);
    await expect(line).toHaveAttribute('data-outbound-state', 'FAILED');
    await expect(line.locator('.outbound-attempts')).toHaveText(/attempts: \d+/);
    await expect(line.locator('.outbound-error')).toContainText('send failed');
    const attempts = async () => Number((await line.locator('.outbound-attempts').textContent())!.replace(/\D+/g, ''));
    const before = await attempts();
    const retry = line.locator('button.outbound-retry');
    await expect(retry).toBeVisible();
    // Retry now (still failing): one more attempt at once, shown live.
    await retry.click();
    await expect.poll(attempts, { timeout: 5_000 }).toBeGreaterThan(before);
    await expect(line).toHaveAttribute('data-outbound-state', 'FAILED');
    // The gateway recovers; retry now sends it.
    writeFileSync(control, 'ok\n');
    await line.locator('button.outbound-retry').click();
    await expect(line).toHaveAttribute('data-outbound-state', 'DELIVERED', { timeout: 10_000 });
    await expect(line.locator('button.outbound-retry')).toHaveCount(0);

    // Clean up: the target and the gateway settings.
    stored = await api(request, 'GET', '/api/settings/notify-targets');
    const mine = (stored.body as Array<{ id?: string; label: string }>).find((t) => t.label === label);
    expect(mine?.id).toBeTruthy();
    expect((await api(request, 'DELETE', `/api/settings/notify-targets/${mine!.id}`)).status).toBe(200);
    expect((await api(request, 'PUT', '/api/settings/gateways', {})).status).toBe(200);
    // The one refused add (400) is logged by the browser as a failed resource.
    const refused = errors.filter((e) => e.includes('status of 400'));
    expect(refused).toHaveLength(1);
    expect(errors.filter((e) => !refused.includes(e))).toEqual([]);
  });
}
