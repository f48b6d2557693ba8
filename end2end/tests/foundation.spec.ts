import { test, expect } from '@playwright/test';
import { api, createTask } from './api';

test('the home page renders on the server and hydrates', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  const response = await page.goto('/');
  expect(response?.status()).toBe(200);
  await expect(page.locator('h1')).toHaveText('Harness');
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  expect(errors).toEqual([]);
});

test('an ask is answered from /harness through a server function', async ({ page, request }) => {
  const taskId = await createTask(request, `E2E question ${Date.now()}`);
  const ask = await api(request, 'POST', '/api/internal/harness/ask', {
    taskId, question: 'Which database should I use?',
  });
  expect(ask.status).toBe(200);

  // Server-rendered: the question is in the HTML before any script runs.
  const html = await (await request.get('/harness')).text();
  expect(html).toContain('Which database should I use?');

  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto('/harness');
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  await expect(row).toContainText('Which database should I use?');
  await row.locator('textarea[name="text"]').fill('SQLite, please');
  const navigations: string[] = [];
  page.on('framenavigated', (f) => { if (f === page.mainFrame()) navigations.push(f.url()); });
  await row.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('#reply-status')).toContainText('Answered');
  await expect(row).toHaveCount(0);
  expect(navigations).toEqual([]); // hydrated: no full page load

  const pending = await api(request, 'GET', `/api/internal/harness/pending?taskId=${taskId}`);
  expect(pending.body.pending).toBe(false);
  const page1 = await api(request, 'GET', `/api/harness/messages?view=answered&taskId=${taskId}`);
  expect(page1.body.rows[0].replyText).toBe('SQLite, please');
  expect(errors).toEqual([]);
  await page.screenshot({ path: 'test-results/harness-answered.png', fullPage: true });
});

test('replying inline resumes a parked agent: the API shows the execution RUNNING', async ({ page, request }) => {
  const created = await api(request, 'POST', '/api/tasks', {
    title: `Parked agent ${Date.now()}`,
    agent: { provider: 'command', command: ['cat'], cwd: '/tmp' },
  });
  const taskId = created.body.id;
  expect((await api(request, 'POST', `/api/tasks/${taskId}/start`)).status).toBe(200);
  expect((await api(request, 'POST', '/api/internal/harness/ask', { taskId, question: 'Proceed with the migration?' })).status).toBe(200);
  expect((await api(request, 'GET', `/api/tasks/${taskId}`)).body.execution.status).toBe('PAUSED');

  await page.goto('/harness');
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  const row = page.locator(`tr[data-task-id="${taskId}"]`);
  await row.locator('textarea[name="text"]').fill('Yes, go ahead');
  await row.getByRole('button', { name: 'Send' }).click();
  await expect(row).toHaveCount(0);
  await expect.poll(async () => (await api(request, 'GET', `/api/tasks/${taskId}`)).body.execution.status).toBe('RUNNING');
  // The reply reached the live terminal (cat echoes it back).
  await expect.poll(async () => (await api(request, 'GET', `/api/tasks/${taskId}/screen`)).body.text).toContain('Yes, go ahead');
  await api(request, 'POST', `/api/tasks/${taskId}/stop`);
});

// A lazy page opened directly takes its chunks from its preloaded pack, and
// the loader compiles them as soon as the pack is in (frontend/tools/pack.mjs).
// When the pack cannot be had, each chunk is fetched on its own instead.
test('a lazy page whose pack fails still hydrates, from its chunk files', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.route(/_pack_[a-z_]+\.wasm$/, (route) => route.abort());
  const chunks: string[] = [];
  page.on('request', (r) => { if (/_(split|chunk)_[a-z0-9_]+\.wasm$/.test(r.url())) chunks.push(r.url()); });
  await page.goto('/settings');
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  expect(chunks.filter((c) => /_split_settings_route_view_/.test(c))).toHaveLength(1);
  // Hydrated, not only rendered: a client-side link works.
  await page.locator('#main-nav a[href="/tasks"]').click();
  await expect(page).toHaveURL(/\/tasks$/);
  await expect(page.locator('h1')).toBeVisible();
  expect(errors).toEqual([]);
});

// The pack is the page's chunks merged into one module (merge-pack.mjs): a
// page opened directly fetches no chunk file of its own, and the chunks it
// shares with the next page are not fetched again when the person moves on.
test('a lazy page opened directly runs from its pack alone; the next page fetches only what it lacks', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  const wasm: string[] = [];
  let loaderUrl: string | undefined;
  page.on('request', (r) => {
    if (/\.wasm$/.test(r.url())) wasm.push(r.url().replace(/^.*\/harness-[0-9a-f]+/, ''));
    if (/_split\.js$/.test(r.url())) loaderUrl = r.url();
  });
  await page.goto('/settings');
  await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
  expect(wasm.filter((f) => /_(split|chunk)_/.test(f))).toEqual([]);
  expect(wasm.filter((f) => /_pack_/.test(f))).toEqual(['_pack_settings_route_view.wasm']);
  // Hydrated from the merged module: a client-side link works, and the page
  // it opens loads its own chunk but none the settings pack already gave.
  await page.locator('#main-nav a[href="/tasks"]').click();
  await expect(page).toHaveURL(/\/tasks$/);
  await expect(page.locator('h1')).toBeVisible();
  const after = wasm.filter((f) => /_(split|chunk)_/.test(f));
  expect(after.filter((f) => /_split_task_list_route_view_/.test(f))).toHaveLength(1);
  // The chunks in the settings pack, from the loader's PACKS index.
  const loader = await (await page.request.get(loaderUrl!)).text();
  const inPack = /_pack_settings_route_view\.wasm"\s*:\s*\[([^\]]*)\]/.exec(loader)?.[1].split(',').map((k) => k.trim()) ?? [];
  expect(inPack.length).toBeGreaterThan(10);
  const refetched = after.filter((f) => inPack.includes(/_chunk_([0-9]+)\.wasm$/.exec(f)?.[1] ?? '-'));
  expect(refetched).toEqual([]);
  expect(after.filter((f) => /_chunk_/.test(f)).length).toBeLessThan(inPack.length);
  expect(errors).toEqual([]);
});
