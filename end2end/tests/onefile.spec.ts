// One file to deploy: the `harness` binary copied alone into an empty
// directory (no site next to it, no HARNESS_SITE_ROOT) serves the whole UI
// from the assets embedded at build time — hashed, precompressed, cached.
import { test, expect } from '@playwright/test';
import { ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => ok(port));
    });
    srv.on('error', fail);
  });
}

test('a copied binary in an empty directory serves and hydrates the UI', async ({ browser }) => {
  test.setTimeout(60_000);
  const original = process.env.HARNESS_BIN;
  if (!original) throw new Error('HARNESS_BIN is not set (run through scripts/e2e.sh)');
  const dir = mkdtempSync(join(tmpdir(), 'harness-onefile-'));
  let child: ChildProcess | undefined;
  let log = '';
  try {
    const bin = join(dir, 'harness');
    copyFileSync(original, bin);
    expect(readdirSync(dir)).toEqual(['harness']);
    const port = await freePort();
    const env = { ...process.env };
    delete env.HARNESS_SITE_ROOT;
    child = spawn(bin, ['serve', '--bind', `127.0.0.1:${port}`, '--data-dir', join(dir, 'data')], {
      cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.on('data', (d) => (log += d));
    child.stderr?.on('data', (d) => (log += d));
    const base = `http://127.0.0.1:${port}`;
    await expect.poll(async () => {
      try { return (await fetch(`${base}/healthz`)).status; } catch { return 0; }
    }, { timeout: 20_000 }).toBe(200);

    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    const assets: { url: string; status: number; headers: Record<string, string> }[] = [];
    page.on('response', async (r) => {
      if (new URL(r.url()).pathname.startsWith('/pkg/')) {
        assets.push({ url: r.url(), status: r.status(), headers: await r.allHeaders() });
      }
    });
    // The UI needs a session on every bind: log in with the printed link's
    // token (the admin token in the new data directory), landing on /harness.
    const token = readFileSync(join(dir, 'data', 'secrets', 'admin.token'), 'utf8').trim();
    const response = await page.goto(`${base}/login?token=${encodeURIComponent(token)}&next=%2Fharness`);
    expect(response?.status()).toBe(200);
    expect((await response!.allHeaders())['cache-control']).toBe('no-cache');
    await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
    // The stylesheet applied: the top bar is laid out by main.css.
    await expect(page.locator('header.topnav')).toHaveCSS('display', 'flex');
    expect(errors).toEqual([]);

    // JS, wasm, CSS and the split loader: hashed names, Brotli, immutable.
    // /harness is in the main module: no page chunk is fetched for it. Its inbound list (a
    // lazy part) loads its own chunks once hydrated when its place is on screen,
    // as here (an empty page): those come from the embedded site too.
    const kind = (a: { url: string }) => new URL(a.url).pathname.replace(/^\/pkg\/harness-[0-9a-f]{16}/, '');
    const part = (k: string) => k.startsWith('_chunk_') || k.startsWith('_split_harness_inbound_');
    expect(assets.map(kind).filter((k) => !part(k)).sort()).toEqual(['.css', '.js', '_bg.wasm', '_split.js']);
    // A lazy page: its chunk comes from the embedded site too.
    await page.locator('nav a[href="/settings"]').click();
    await expect(page.locator('main h1').first()).toBeVisible();
    await expect.poll(() => assets.map(kind).some((k) => k.startsWith('_split_settings_route_view_'))).toBe(true);
    for (const a of assets) {
      expect(a.status, a.url).toBe(200);
      // pack.mjs compresses files over 256 bytes (some shared chunks are smaller).
      const tiny = !a.headers['content-encoding'] && Number(a.headers['content-length']) <= 256;
      expect(tiny || a.headers['content-encoding'] === 'br', `${a.url} ${JSON.stringify(a.headers)}`).toBe(true);
      expect(a.headers['cache-control'], a.url).toBe('public, max-age=31536000, immutable');
    }
    // Opened directly, a lazy page names the pack of its chunks (one file,
    // pack.mjs) in <link rel="preload"> (the split manifest embedded with the
    // site): it downloads with the main module instead of after it, and once
    // (the loader takes the preloaded response and cuts the chunks out of it:
    // none is fetched on its own). /harness preloads nothing. The links are
    // read from the HTML as served: after hydration leptos_meta may drop
    // head tags it did not render itself, so the live DOM is not the record.
    const fresh = await browser.newContext();
    await fresh.addCookies(await context.cookies());
    const direct = await fresh.newPage();
    const fetched: string[] = [];
    direct.on('request', (r) => { if (r.url().endsWith('.wasm')) fetched.push(new URL(r.url()).pathname); });
    const preloads = (html: string) => [...html.matchAll(/<link\b[^>]*>/g)]
      .map((m) => m[0])
      .filter((tag) => /\brel="preload"/.test(tag))
      .map((tag) => /\bhref="([^"]+)"/.exec(tag)?.[1] ?? '')
      .filter((href) => href.endsWith('.wasm'));
    const served = await direct.goto(`${base}/settings`);
    const preloaded = preloads(await served!.text());
    await expect(direct.locator('body')).toHaveAttribute('data-hydrated', 'true');
    expect(preloaded.filter((h) => /_pack_settings_route_view\.wasm$/.test(h))).toHaveLength(1);
    for (const href of preloaded) {
      await expect.poll(() => fetched.filter((f) => f === href).length, { message: href }).toBeGreaterThan(0);
      expect(fetched.filter((f) => f === href), href).toHaveLength(1);
    }
    expect(fetched.filter((f) => /_(split|chunk)_/.test(f))).toEqual([]);
    const harness = await direct.goto(`${base}/harness`);
    expect(preloads(await harness!.text()).filter((h) => /_(split|pack|chunk)_/.test(h))).toEqual([]);
    await fresh.close();
    await context.close();
    expect(log).not.toContain('will not hydrate');
    expect(readdirSync(dir).sort()).toEqual(['data', 'harness']);
  } finally {
    child?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});
