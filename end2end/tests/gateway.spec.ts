// /gateway: the inbound chat messages by state with their routing result and
// replies, the conversations, the chats' access with the OWNER ids, and the gateway
// credential (masked, rotatable); /harness lists the latest of those messages and links to
// it. Desktop and phone width, both languages.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, expect } from '@playwright/test';
import { api } from './api';

// The gateway CLI double (scripts/e2e.sh): the acknowledgement "may have been sent".
const DOUBLE = process.env.HARNESS_GATEWAY_DOUBLE ?? '';

test('the gateway page shows inbound messages, conversations, chats and the credential', async ({ page, request }) => {
  // No wasm panic anywhere (the first /harness list broke hydration: `unreachable`).
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const before = await api(request, 'GET', '/api/settings/gateways');
  expect(before.status).toBe(200);
  const control = join(mkdtempSync(join(tmpdir(), 'gw-double-')), 'mode');
  writeFileSync(control, 'error-id\n');
  const cli = DOUBLE ? { cliPath: DOUBLE, env: { GATEWAY_DOUBLE_CONTROL: control } } : {};
  const settings = { ...before.body, hermes: { ...(before.body?.hermes ?? {}), ...cli, accessPolicy: { ownerIds: { telegram: ['4242'] } } } };
  expect((await api(request, 'PUT', '/api/settings/gateways', settings)).status).toBe(200);
  const name = `gw-shop-${Date.now()}`;
  const project = await api(request, 'POST', '/api/projects', { name, path: mkdtempSync(join(tmpdir(), 'gw-')) });
  expect(project.status).toBe(201);
  // The project's Workbench: a command agent that only idles (started for the request).
  const wb = await api(request, 'POST', `/api/projects/${project.body.id}/workbench`, {
    agent: { provider: 'command', command: ['sleep', '120'] },
  });
  expect([200, 201]).toContain(wb.status);
  const message = (pmid: string, intent: string, content: string) => ({
    gateway: 'hermes', platform: 'telegram', chatId: '-100777', platformMessageId: `${pmid}-${Date.now()}`,
    senderId: '4242', intent, project: name, content,
  });
  const work = await api(request, 'POST', '/api/internal/harness/gateway',
    message('w', 'PROJECT_WORK', 'make the checkout page faster on phones'));
  expect(work.status).toBe(200);
  expect(work.body.mode).toBe('project_work');
  const tower = await api(request, 'POST', '/api/internal/harness/gateway', message('t', 'TOWER', 'what is waiting?'));
  expect(tower.body.mode).toBe('tower_mcp');
  const access = await api(request, 'POST', '/api/internal/harness/gateway-access', {
    action: 'bind_projects', gatewayInboundId: tower.body.inboundId, projects: [name], chatName: 'Shop team',
  });
  expect(access.status).toBe(200);

  for (const size of [{ width: 1440, height: 900 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(size);
    await page.goto('/gateway');
    await expect(page.locator('h1')).toHaveText('Chat gateway');
    const row = page.locator(`#gw-inbound-table tr[data-inbound-id="${work.body.inboundId}"]`);
    await expect(row).toBeVisible();
    await expect(row.locator('.gw-mode')).toHaveText('project_work');
    await expect(row.locator('li[data-reply-kind="QUEUED_ACK"]')).toBeVisible();
    await expect(page.locator('#gw-sessions tbody tr').first()).toContainText(name);
    const chat = page.locator('#gw-channels tr[data-chat-id="-100777"]');
    await expect(chat).toHaveAttribute('data-access', 'AUTHORIZED');
    await expect(chat).toContainText('Shop team');
    await expect(page.locator('#gw-owners')).toContainText('hermes · telegram: 4242');
    await expect(page.locator('#gw-token-masked')).toHaveText(/^hxg_….{4}$/);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: test.info().outputPath(`gateway-${size.width}.png`), fullPage: true });
  }
  // The acknowledgement that may have been sent: its error, and "mark as delivered" (docs/decisions.md D7).
  if (DOUBLE) {
    const ack = page.locator(`tr[data-inbound-id="${work.body.inboundId}"] li[data-reply-kind="QUEUED_ACK"]`);
    await expect(async () => {
      await page.goto('/gateway');
      await expect(ack).toHaveAttribute('data-reply-state', 'SENT_UNVERIFIED', { timeout: 1_000 });
    }).toPass({ timeout: 20_000 });
    await expect(ack.locator('.gw-reply-error')).toBeVisible();
    await expect(ack.locator('.gw-reply-retry')).toBeVisible();
    await ack.locator('.gw-reply-mark').click();
    await expect(ack).toHaveAttribute('data-reply-state', 'DELIVERED');
    await page.goto('/gateway');
    await expect(page.locator(`tr[data-inbound-id="${work.body.inboundId}"] li[data-reply-kind="QUEUED_ACK"]`))
      .toHaveAttribute('data-reply-state', 'DELIVERED');
  }

  // Filtered by state: only the QUEUED work request.
  await page.locator('button.chip[data-state="QUEUED"]').click();
  await expect(page.locator('#gw-inbound-table tbody tr[data-state="PROCESSED"]')).toHaveCount(0);
  await expect(page.locator(`tr[data-inbound-id="${work.body.inboundId}"]`)).toBeVisible();

  // /harness: the latest inbound messages with their routing result and replies (a lazy
  // chunk mounted after hydration: the main module stays in its budget), light and dark,
  // phone and desktop; a link here.
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const size of [{ width: 1280, height: 900 }, { width: 390, height: 844 }]) {
      await page.setViewportSize(size);
      await page.goto('/harness');
      await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
      // The list loads when its place comes near the screen (below the questions).
      await page.locator('#harness-gateway-link').scrollIntoViewIfNeeded();
      const row = page.locator(`#harness-inbound tr[data-inbound-id="${work.body.inboundId}"]`);
      await expect(row).toBeVisible();
      await expect(row.locator('.gw-mode')).toHaveText('project_work');
      await expect(row.locator('.gw-content')).toHaveText('make the checkout page faster on phones');
      await expect(row.locator('li[data-reply-kind="QUEUED_ACK"]')).toBeVisible();
      await expect(page.locator(`#harness-inbound tr[data-inbound-id="${tower.body.inboundId}"] .gw-mode`))
        .toHaveText('tower_mcp');
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await page.locator('#harness-inbound').scrollIntoViewIfNeeded();
      await page.screenshot({ path: test.info().outputPath(`harness-inbound-${scheme}-${size.width}.png`), fullPage: true });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  // Live: a message routed now (queued for the Workbench: a change event) shows up without a reload.
  const later = await api(request, 'POST', '/api/internal/harness/gateway',
    message('l', 'PROJECT_DISCUSSION', 'how fast is checkout now?'));
  expect(later.status).toBe(200);
  expect(later.body.mode).toBe('project_discussion');
  await expect(page.locator(`#harness-inbound tr[data-inbound-id="${later.body.inboundId}"]`)).toBeVisible();
  await page.locator('#harness-gateway-link').click();
  await expect(page).toHaveURL(/\/gateway$/);
  expect(errors).toEqual([]);

  // Chinese.
  await page.context().addCookies([{ name: 'harness_lang', value: 'zh', url: page.url() }]);
  await page.goto('/gateway');
  await expect(page.locator('h1')).toHaveText('聊天网关');
  await page.context().clearCookies({ name: 'harness_lang' });

  // Rotating the credential shows the new one once; the masked one follows it.
  await page.goto('/gateway');
  await page.locator('#gw-rotate').click();
  const fresh = (await page.locator('.gw-new-token').textContent()) ?? '';
  expect(fresh).toMatch(/^hxg_/);
  await page.goto('/gateway');
  await expect(page.locator('#gw-token-masked')).toHaveText(`hxg_…${fresh.slice(-4)}`);

  await api(request, 'POST', `/api/tasks/${wb.body.id}/stop`, {});
  expect((await api(request, 'PUT', '/api/settings/gateways', before.body ?? {})).status).toBe(200);
});
