// A question's evidence and receipt (docs/evidence.md): the agent's screen
// when it asked, redacted, in /harness' dialog and on the task page, and
// the question's timeline down to the lines the agent wrote after the
// answer — at 1280 and 390 px, in English and Chinese (screenshots kept
// under the test's output). A fake key (E2EPLANTED, which scripts/e2e.sh
// also looks for in the server's log) is on the agent's screen and never
// on a page.
import { test, expect, Page, Browser } from '@playwright/test';
import { join } from 'node:path';
import AxeBuilder from '@axe-core/playwright';
import { api } from './api';
import { STORAGE_STATE } from '../global-setup';

const PLANTED = 'sk-ant-api03-E2EPLANTEDfakeKEY0123456789abc';

/** `scope`: what must hold no key (the task page's own terminal and
 * command show the agent's raw screen; the evidence never does). */
async function shoot(page: Page, dir: string, name: string, scope: string) {
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
  const axe = await new AxeBuilder({ page }).analyze();
  const serious = axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(' | ')}`);
  expect(serious, `${name}: ${serious.join('\n')}`).toEqual([]);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow, `${name}: the page is ${overflow} px wider than the window`).toBeLessThanOrEqual(0);
  expect(await page.locator(scope).first().innerHTML()).not.toContain('E2EPLANTED');
}

async function context(browser: Browser, width: number, locale: string) {
  const phone = width < 640;
  return browser.newContext({
    storageState: STORAGE_STATE, locale, viewport: { width, height: phone ? 844 : 900 },
    isMobile: phone, hasTouch: phone,
  });
}

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  return errors;
}

const VIEWS = [[1280, 'en-US'], [390, 'en-US'], [1280, 'zh-CN'], [390, 'zh-CN']] as const;

test('the dialog and the task page show the screen and the receipt, redacted', async ({ browser, request }, info) => {
  test.setTimeout(150_000);
  const shots = join(info.project.outputDir, 'evidence-screens');
  const title = `Invoices ${Date.now().toString(36)}`;
  const script = `echo "running migration 7 of 9"; echo "using key ${PLANTED}"; `
    + 'while IFS= read -r l; do echo "got $l"; echo "keeping the legacy format"; done';
  const created = await api(request, 'POST', '/api/tasks', {
    title, agent: { provider: 'command', command: ['sh', '-c', script], cwd: '/tmp' },
  });
  expect(created.status).toBe(201);
  const id: string = created.body.id;
  expect((await api(request, 'POST', `/api/tasks/${id}/start`)).status).toBe(200);
  await expect.poll(async () => (await api(request, 'GET', `/api/tasks/${id}/screen`)).body?.text ?? '')
    .toContain('running migration 7 of 9');
  const asked = await api(request, 'POST', '/api/internal/harness/ask',
    { taskId: id, question: 'Should I keep the legacy invoice format?' });
  expect(asked.status, JSON.stringify(asked.body)).toBe(200);
  const requestId: string = asked.body.requestId;

  for (const [width, locale] of VIEWS) {
    const zh = locale === 'zh-CN';
    const ctx = await context(browser, width, locale);
    const page = await ctx.newPage();
    const errors = watchErrors(page);
    await page.goto(`/harness?view=all&q=${encodeURIComponent(title)}`);
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
    const row = page.locator(`tr[data-task-id="${id}"]`);
    await row.focus();
    await page.keyboard.press('Enter');
    const dialog = page.locator('#detail-dialog');
    await expect(dialog).toBeVisible();
    const screen = dialog.locator('#evidence-screen');
    await expect(screen).toContainText('running migration 7 of 9');
    await expect(screen).toContainText('using key sk-ant-[REDACTED]');
    await expect(screen).toHaveCSS('font-family', /monospace/);
    await expect(dialog.locator('li[data-step="asked"]')).toHaveAttribute('data-status', 'done');
    const answered = dialog.locator('li[data-step="answered"]');
    await expect(answered).toHaveAttribute('data-status', 'waiting');
    await expect(answered).toContainText(zh ? '已等待回答' : 'Waiting for an answer');
    await shoot(page, shots, `dialog-${locale}-${width}`, 'html');
    expect(errors).toEqual([]);
    await ctx.close();
  }

  // Answered: typed once, the agent goes on, its first lines after it.
  const reply = await api(request, 'POST', '/api/internal/harness/reply', { taskId: id, text: 'keep it' });
  expect(reply.status, JSON.stringify(reply.body)).toBe(200);
  await expect.poll(async () => {
    const r = (await api(request, 'GET', `/api/messages/${requestId}/receipt`)).body;
    return r.steps.find((s: { step: string }) => s.step === 'screen_after')?.status;
  }, { timeout: 20_000 }).toBe('done');
  const receipt = await api(request, 'GET', `/api/messages/${requestId}/receipt`);
  expect(JSON.stringify(receipt.body)).not.toContain('E2EPLANTED');

  for (const [width, locale] of VIEWS) {
    const zh = locale === 'zh-CN';
    const ctx = await context(browser, width, locale);
    const page = await ctx.newPage();
    const errors = watchErrors(page);
    await page.goto(`/tasks/${id}`);
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
    const details = page.locator(`details[data-receipt="${requestId}"]`);
    await details.locator('summary').click();
    await expect(details.locator('#evidence-screen')).toContainText('using key sk-ant-[REDACTED]');
    await expect(details.locator('li[data-step="typed"]')).toContainText(zh ? '已输入终端一次' : 'Typed into the terminal once');
    await expect(details.locator('li[data-step="answered"]')).toContainText(zh ? '网页' : 'on the web');
    await expect(details.locator('li[data-step="resumed"]')).toHaveAttribute('data-status', 'done');
    const after = details.locator('li[data-step="screen_after"]');
    await expect(after).toHaveAttribute('data-status', 'done');
    await expect(after.locator('pre.screen')).toContainText('keeping the legacy format');
    await details.scrollIntoViewIfNeeded();
    await shoot(page, shots, `task-${locale}-${width}`, `details[data-receipt="${requestId}"]`);
    expect(errors).toEqual([]);
    await ctx.close();
  }
  await api(request, 'POST', `/api/tasks/${id}/stop`);
});

test('a notify target includes the screen in its pushes only once ticked', async ({ browser, request }, info) => {
  const shots = join(info.project.outputDir, 'evidence-screens');
  const added = await api(request, 'POST', '/api/settings/notify-targets/add', {
    label: `phone ${Date.now().toString(36)}`, gateway: 'openclaw', downstream: 'telegram', dest: 'telegram:4242', scope: 'work',
  });
  expect(added.status, JSON.stringify(added.body)).toBe(200);
  const key: string = added.body.id;
  expect(added.body.includeScreen).toBeUndefined();
  for (const [width, locale] of [[1280, 'en-US'], [390, 'zh-CN']] as const) {
    const ctx = await context(browser, width, locale);
    const page = await ctx.newPage();
    const errors = watchErrors(page);
    await page.goto('/settings');
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
    const form = page.locator(`form.include-screen[data-key="${key}"]`);
    const box = form.locator('input[type=checkbox]');
    const on = locale === 'zh-CN';
    await expect(form).toContainText(on ? '推送的问题附带智能体的屏幕' : "Include the agent's screen");
    if (on) await box.check(); else await box.uncheck();
    await form.locator('button.set-screen').click();
    await expect.poll(async () => {
      const list = (await api(request, 'GET', '/api/settings/notify-targets')).body;
      const targets = Array.isArray(list) ? list : list.targets;
      return targets.find((t: { id: string }) => t.id === key)?.includeScreen ?? false;
    }).toBe(on);
    await expect(form.locator('input[type=checkbox]')).toBeChecked({ checked: on });
    await shoot(page, shots, `settings-${locale}-${width}`, 'html');
    // The card itself, at its size (the page is long).
    await page.locator('#notifications').screenshot({ path: join(shots, `settings-card-${locale}-${width}.png`) });
    expect(errors).toEqual([]);
    await ctx.close();
  }
  await api(request, 'DELETE', `/api/settings/notify-targets/${key}`);
});

/** Relative luminance of a CSS `rgb(…)` colour (0 black … 1 white). */
function luminance(css: string): number {
  const [r, g, b] = (css.match(/[\d.]+/g) ?? ['0', '0', '0']).slice(0, 3).map((v) => Number(v) / 255)
    .map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4));
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

test('an approval carries the screen it was held from, redacted, in light and dark', async ({ browser, request }, info) => {
  test.setTimeout(120_000);
  const shots = join(info.project.outputDir, 'evidence-screens');
  const title = `Deploy ${Date.now().toString(36)}`;
  const parent = await api(request, 'POST', '/api/tasks', {
    title: `${title} parent`, agent: { provider: 'command', command: ['true'] },
  });
  expect(parent.status).toBe(201);
  const script = `echo "deploying build 42 to staging"; echo "export KEY=${PLANTED}"; exec sleep 600`;
  const child = await api(request, 'POST', '/api/tasks', {
    title, parentTaskId: parent.body.id,
    agent: { provider: 'command', command: ['sh', '-c', script], cwd: '/tmp' },
  });
  expect(child.status).toBe(201);
  const id: string = child.body.id;
  expect((await api(request, 'POST', `/api/tasks/${id}/start`)).status).toBe(200);
  await expect.poll(async () => (await api(request, 'GET', `/api/tasks/${id}/screen`)).body?.text ?? '')
    .toContain('deploying build 42');
  // The pre-tool hook holds a risky call of the derived task: an approval.
  const held = await api(request, 'POST', '/api/internal/approvals/check', {
    taskId: id, tool: 'Bash', input: { command: 'git push --force origin main' }, cwd: '/tmp', waitSeconds: 0,
  });
  expect(held.status, JSON.stringify(held.body)).toBe(200);
  expect(held.body.waiting).toBe(true);
  const approvalId: string = held.body.approvalId;
  // An approval is an ask: its evidence is its message's.
  const evidence = await api(request, 'GET', `/api/messages/${held.body.requestId}/evidence`);
  expect(evidence.status, JSON.stringify(evidence.body)).toBe(200);
  expect(JSON.stringify(evidence.body)).toContain('deploying build 42');
  expect(JSON.stringify(evidence.body)).not.toContain('E2EPLANTED');

  const views = [[1280, 'en-US', 'light'], [390, 'zh-CN', 'dark'], [1280, 'zh-CN', 'dark'], [390, 'en-US', 'light']] as const;
  for (const [width, locale, scheme] of views) {
    const phone = width < 640;
    const ctx = await browser.newContext({
      storageState: STORAGE_STATE, locale, colorScheme: scheme,
      viewport: { width, height: phone ? 844 : 900 }, isMobile: phone, hasTouch: phone,
    });
    const page = await ctx.newPage();
    const errors = watchErrors(page);
    await page.goto(`/harness?view=pending&q=${encodeURIComponent(title)}`);
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
    const row = page.locator(`tr[data-task-id="${id}"]`);
    await expect(row).toContainText('git push --force origin main');
    await row.focus();
    await page.keyboard.press('Enter');
    const dialog = page.locator('#detail-dialog');
    await expect(dialog).toBeVisible();
    const screen = dialog.locator('#evidence-screen');
    await expect(screen).toContainText('deploying build 42 to staging');
    await expect(screen).toContainText('sk-ant-[REDACTED]');
    await expect(screen).toHaveCSS('font-family', /monospace/);
    // Readable in both schemes: the page follows the system, the screen's
    // text stands off its background.
    const [bodyBg, fg, bg] = await page.evaluate(() => {
      const pre = document.querySelector('#detail-dialog #evidence-screen') as HTMLElement;
      const s = getComputedStyle(pre);
      let el: HTMLElement | null = pre;
      let back = s.backgroundColor;
      while (el && (back === 'rgba(0, 0, 0, 0)' || back === 'transparent')) {
        el = el.parentElement;
        back = el ? getComputedStyle(el).backgroundColor : 'rgb(255, 255, 255)';
      }
      return [getComputedStyle(document.body).backgroundColor, s.color, back];
    });
    if (scheme === 'dark') expect(luminance(bodyBg), `body ${bodyBg}`).toBeLessThan(0.2);
    else expect(luminance(bodyBg), `body ${bodyBg}`).toBeGreaterThan(0.6);
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    expect((hi + 0.05) / (lo + 0.05), `screen text ${fg} on ${bg}`).toBeGreaterThanOrEqual(4.5);
    await shoot(page, shots, `approval-${scheme}-${locale}-${width}`, '#detail-dialog');
    expect(errors).toEqual([]);
    await ctx.close();
  }
  await api(request, 'POST', `/api/approvals/${approvalId}/decide`, { decision: 'deny', reason: 'e2e done' });
  await api(request, 'POST', `/api/tasks/${id}/stop`);
});
