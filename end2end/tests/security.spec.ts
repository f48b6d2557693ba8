// In a real Chromium: no other origin can frame the UI (clickjacking
// into an agent's shell), pages run under a nonce CSP without violations, and
// a browser without a session only ever sees the login.
import { test, expect, Page } from '@playwright/test';
import { adminToken, createTask } from './api';

function collectCsp(page: Page): string[] {
  const seen: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) seen.push(m.text());
  });
  return seen;
}

test('a page on another origin cannot frame the UI', async ({ page, request, baseURL }) => {
  const taskId = await createTask(request, `Framed ${Date.now()}`);
  await page.route('http://evil.test/**', (route) =>
    route.fulfill({
      contentType: 'text/html',
      body: `<!DOCTYPE html><title>evil</title>
        <p>Click the button!</p>
        <iframe id="ui" style="opacity:0.01" src="${baseURL}/tasks/${taskId}"
          onload="window.loadedUi = true"></iframe>
        <iframe id="login" src="${baseURL}/login" onload="window.loadedLogin = true"></iframe>`,
    }),
  );
  await page.goto('http://evil.test/');
  await page.waitForFunction(() => (window as any).loadedUi && (window as any).loadedLogin);
  const children = page.mainFrame().childFrames();
  expect(children).toHaveLength(2);
  for (const frame of children) {
    // A refused frame shows Chromium's error page, never our document.
    const title = await frame.evaluate(() => document.title).catch(() => '');
    const text = await frame.evaluate(() => document.body?.innerText ?? '').catch(() => '');
    expect(title).not.toContain('Harness');
    expect(text).not.toContain('Harness');
    expect(await frame.locator('header.topnav, form[action="/login"]').count()).toBe(0);
  }
  // Without the headers the second frame would show the login form (the
  // SameSite=Strict cookie is not sent to a framed cross-site request).
});

test('pages hydrate under the nonce CSP without a single violation', async ({ page, request }) => {
  const taskId = await createTask(request, `CSP ${Date.now()}`);
  const violations = collectCsp(page);
  for (const path of ['/', '/harness', '/tasks', `/tasks/${taskId}`, '/projects', '/settings']) {
    const response = await page.goto(path);
    expect(response?.status(), path).toBe(200);
    const csp = response!.headers()['content-security-policy'];
    expect(csp).toMatch(/script-src 'self' 'nonce-[A-Za-z0-9_-]+' 'wasm-unsafe-eval'/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response!.headers()['x-frame-options']).toBe('DENY');
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  }
  // An injected inline script without the nonce does not run.
  await page.goto('/harness');
  await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.injected = true';
    document.head.appendChild(s);
  });
  expect(await page.evaluate(() => (window as any).injected === true)).toBe(false);
  expect(violations.filter((v) => !v.includes("script-src"))).toEqual([]);
  expect(violations.length).toBe(1); // only the injected script was refused
});

test.describe('without a session', () => {
  test.use({ storageState: { cookies: [], origins: [] } });

  test('the browser is sent to the login, logs in, and logs out', async ({ page }) => {
    await page.goto('/tasks');
    await expect(page).toHaveURL(/\/login\?next=%2Ftasks$/);
    await page.locator('input[name="token"]').fill('not-the-token');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page.getByRole('alert')).toContainText('That is not the admin token.');
    await page.locator('input[name="token"]').fill(adminToken());
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect(page).toHaveURL(/\/tasks$/);
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'harness_session');
    expect(session?.httpOnly).toBe(true);
    expect(session?.sameSite).toBe('Strict');
    expect(session?.value).not.toBe(adminToken());

    await page.getByRole('link', { name: 'Log out' }).click();
    await expect(page).toHaveURL(/\/logout$/);
    await page.getByRole('button', { name: 'Log out', exact: true }).click();
    await expect(page).toHaveURL(/\/login$/);
    await page.goto('/harness');
    await expect(page).toHaveURL(/\/login\?next=%2Fharness$/);
    // The old cookie value is dead even if replayed.
    await page.context().addCookies([{ ...session!, expires: -1 }]);
    await page.goto('/harness');
    await expect(page).toHaveURL(/\/login/);
  });

  test('the printed link logs in directly', async ({ page }) => {
    await page.goto(`/login?token=${adminToken()}`);
    // Home: a newcomer's first step is there.
    await expect(page).toHaveURL(/\/$/);
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  });
});
