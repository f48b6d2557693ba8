// Page-load budget of the web UI as a phone on 4G meets it: headless Chromium,
// 390×844, 9 Mbit/s with 85 ms latency, CPU slowed 4×, cold cache, median of
// RUNS (5). For `/harness`, a task page with a live terminal, and a task page
// with a live terminal, its history and an open question: time to the
// first contentful paint, time to hydration (`body[data-hydrated]`: the page
// is interactive; then `data-hydrated-all`: its deferred sections too), bytes
// transferred on the first load and on a second visit (warm cache).
//
//   scripts/build-site.sh && cargo build --locked --release -p server
//   node end2end/bench/load.mjs [--bin target/release/harness] [--runs 5]
//
// It starts the binary itself (embedded assets; HARNESS_SITE_ROOT is unset,
// unless --site <dir> names a built site to serve instead: the same
// in-memory serving, without relinking the binary after a site build)
// on a free port with a throw-away data directory. Prints PASS/FAIL against
// the targets and the figures measured before the bundle was compressed,
// hashed and optimised.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../..');
const require = createRequire(join(here, '../package.json'));
const { chromium } = require('playwright-core');

const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const target = process.env.CARGO_TARGET_DIR ?? join(root, 'target');
const bin = resolve(arg('--bin', join(target, 'release', 'harness')));
const runs = Number(arg('--runs', '5'));
const siteDir = arg('--site', null);
// --breakdown: also print what the first load of each page transferred, by file.
const breakdown = process.argv.includes('--breakdown');
// --timeline: also print, for each run, when each file was requested and
// arrived, when each wasm module was compiled and instantiated, and
// hydration (what a page's time to interactive is made of).
const timeline = process.argv.includes('--timeline');
// --eager: hydrate the deferred sections with the page (app/src/deferred.rs),
// as before they were deferred: an A/B of that change on one build.
const eager = process.argv.includes('--eager');

// The profile: a mid-range phone on 4G.
const NETWORK = { offline: false, latency: 85, downloadThroughput: (9e6 / 8), uploadThroughput: (9e6 / 8) };
const CPU_SLOWDOWN = 4;
const VIEWPORT = { width: 390, height: 844 };
// hydrated in < 1 s, and /harness (the page a phone opens on "your
// agent needs a decision") at most 400 KiB on a first load; the task page
// keeps the earlier 800 KiB (it also fetches the terminal module, after
// hydration).
const TARGETS = { hydratedMs: 1000, secondVisitBytes: 20 * 1024 };
const FIRST_LOAD_BYTES = { '/harness': 400 * 1024, 'task page': 800 * 1024, 'task page, open question': 800 * 1024 };
// Before this change (uncompressed 4.4 MB wasm, no Cache-Control): this
// script against the debug build of main at 3a94071 and its site, on the
// 2-core machine while other builds ran (the issue measured the release
// build by hand at 4.8–5.0 s to hydration).
const BEFORE = {
  '/harness': { fcp: 848, hydrated: 5411, first: 4389.8 * 1024, second: 13.8 * 1024 },
  'task page': { fcp: 796, hydrated: 5832, first: 4380.1 * 1024, second: 3.7 * 1024 },
  // Added 2026-12-05, after the bundle work: no "before" to compare with.
  'task page, open question': null,
};

async function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
    srv.on('error', fail);
  });
}

async function startServer() {
  const data = mkdtempSync(join(tmpdir(), 'harness-bench-'));
  const port = await freePort();
  const env = { ...process.env };
  delete env.HARNESS_SITE_ROOT;
  if (siteDir) env.HARNESS_SITE_ROOT = resolve(siteDir);
  const child = spawn(bin, ['serve', '--bind', `127.0.0.1:${port}`, '--data-dir', join(data, 'data')], {
    cwd: data,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      if ((await fetch(`${base}/healthz`)).ok) break;
    } catch {}
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const token = readFileSync(join(data, 'data', 'secrets', 'admin.token'), 'utf8').trim();
  const stop = () => {
    child.kill('SIGTERM');
    rmSync(data, { recursive: true, force: true });
  };
  return { base, token, stop, warnings: () => log };
}

async function api(server, method, path, body) {
  const res = await fetch(`${server.base}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

// Some content: 20 questions across 5 tasks, and one task with a live shell.
async function seed(server) {
  for (let t = 0; t < 5; t++) {
    const task = await api(server, 'POST', '/api/tasks', {
      title: `Bench task ${t}`,
      agent: { provider: 'command', command: ['true'] },
    });
    for (let q = 0; q < 4; q++) {
      await api(server, 'POST', '/api/internal/harness/ask', {
        taskId: task.id,
        question: `Question ${q} of task ${t}: which of the two migration plans should I follow?`,
      });
    }
  }
  const live = await api(server, 'POST', '/api/tasks', {
    title: 'Live terminal',
    agent: { provider: 'command', command: ['bash', '--norc', '--noprofile'], cwd: '/tmp', env: { PS1: 'bench$ ' } },
  });
  await api(server, 'POST', `/api/tasks/${live.id}/start`, {});
  // The page a person opens on "your agent needs a decision": a live agent
  // with its history (progress notes, earlier questions each replaced by the
  // next) and an open question with options, on the first screen.
  const asking = await api(server, 'POST', '/api/tasks', {
    title: 'Agent waiting for a decision',
    agent: { provider: 'command', command: ['bash', '--norc', '--noprofile'], cwd: '/tmp', env: { PS1: 'agent$ ' } },
  });
  await api(server, 'POST', `/api/tasks/${asking.id}/start`, {});
  for (let i = 0; i < 12; i++) {
    await api(server, 'POST', '/api/internal/harness/notify', {
      taskId: asking.id,
      message: `Step ${i} done: ran the migrations on the staging copy; 3 tables changed, 2 indexes rebuilt.`,
    });
    await api(server, 'POST', '/api/internal/harness/ask', {
      taskId: asking.id,
      question: `Question ${i}: keep the old column \`legacy_id\` for the **reporting** job, or drop it now?`,
    });
  }
  await api(server, 'POST', '/api/internal/harness/ask', {
    taskId: asking.id,
    question: 'Which database should the **release** use?\n\n- the tests pass on both\n- Postgres needs a server',
    options: [{ label: 'Postgres', description: 'a server to run' }, { label: 'SQLite' }, { label: 'Ask me tomorrow' }],
  });
  return [live.id, asking.id];
}

async function measure(browser, server, url) {
  const context = await browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 3, isMobile: true, hasTouch: true });
  if (eager) await context.addInitScript(() => { window.harnessEagerHydration = true; });
  await context.addInitScript(() => {
    // Compile / instantiate marks of every wasm module (main, chunks, terminal).
    const marks = (window.__wasmMarks = []);
    const long = (window.__longTasks = []);
    try {
      new PerformanceObserver((l) => long.push(...l.getEntries())).observe({ type: 'longtask', buffered: true });
    } catch {}
    const wrap = (name) => {
      const orig = WebAssembly[name];
      WebAssembly[name] = function (...args) {
        const start = performance.now();
        const size = args[0]?.byteLength;
        const done = (r) => (marks.push({ what: name, size, start, end: performance.now() }), r);
        return orig.apply(this, args).then(done);
      };
    };
    for (const name of ['instantiate', 'instantiateStreaming', 'compile', 'compileStreaming']) wrap(name);
    for (const name of ['Module', 'Instance']) {
      const Orig = WebAssembly[name];
      WebAssembly[name] = new Proxy(Orig, {
        construct(target, args) {
          const start = performance.now();
          const r = Reflect.construct(target, args);
          marks.push({ what: `new ${name}`, size: args[0]?.byteLength, start, end: performance.now() });
          return r;
        },
      });
    }
    // `data-hydrated`: the page is interactive; `data-hydrated-all`: its
    // deferred sections (app/src/deferred.rs) are hydrated too.
    new MutationObserver((_, observer) => {
      if (window.__hydratedAt === undefined && document.body?.hasAttribute('data-hydrated')) {
        window.__hydratedAt = performance.now();
      }
      if (document.body?.hasAttribute('data-hydrated-all')) {
        window.__hydratedAllAt = performance.now();
        observer.disconnect();
      }
    }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-hydrated', 'data-hydrated-all'] });
  });
  const page = await context.newPage();
  // The UI needs a session on every bind: log in outside the browser and
  // hand the context the session cookie, so its cache stays cold.
  const login = await fetch(`${server.base}/login?token=${server.token}`, { redirect: 'manual' });
  const [pair] = (login.headers.get('set-cookie') ?? '').split(';');
  const eq = pair.indexOf('=');
  if (eq < 0) throw new Error(`login gave no session cookie (HTTP ${login.status})`);
  await context.addCookies([{ name: pair.slice(0, eq), value: pair.slice(eq + 1), url: server.base }]);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', NETWORK);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU_SLOWDOWN });
  let bytes = 0;
  const urls = new Map();
  let files = [];
  cdp.on('Network.requestWillBeSent', (e) => urls.set(e.requestId, e.request.url));
  cdp.on('Network.loadingFinished', (e) => {
    bytes += e.encodedDataLength;
    files.push([new URL(urls.get(e.requestId) ?? 'http://x/?').pathname, e.encodedDataLength]);
  });
  const visit = async () => {
    bytes = 0;
    files = [];
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForFunction(() => window.__hydratedAllAt !== undefined, null, { timeout: 60_000 });
    // Let late requests (server functions after hydration) finish.
    await page.waitForLoadState('networkidle').catch(() => {});
    return page.evaluate(() => ({
      fcp: performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? NaN,
      hydrated: window.__hydratedAt,
      hydratedAll: window.__hydratedAllAt,
      // The last wasm file the page needed before it was interactive (the
      // main module, and a lazy page's chunks; not the terminal, loaded after).
      wasm: Math.max(...performance.getEntriesByType('resource')
        .filter((r) => r.name.endsWith('.wasm') && r.responseEnd <= window.__hydratedAt)
        .map((r) => r.responseEnd)),
      timeline: [
        ...performance.getEntriesByType('navigation').map((r) => ({ name: 'document', start: r.startTime, first: r.responseStart, end: r.responseEnd, size: r.transferSize, dcl: r.domContentLoadedEventEnd })),
        ...performance.getEntriesByType('resource').map((r) => ({ name: new URL(r.name).pathname, start: r.startTime, first: r.responseStart, end: r.responseEnd, size: r.transferSize })),
        ...window.__wasmMarks.map((m) => ({ name: `${m.what}${m.size ? ` (${m.size} B)` : ''}`, start: m.start, end: m.end })),
        ...window.__longTasks.map((t) => ({ name: 'long task', start: t.startTime, end: t.startTime + t.duration })),
        { name: 'hydrated', start: window.__hydratedAt, end: window.__hydratedAt },
        { name: 'deferred sections hydrated', start: window.__hydratedAllAt, end: window.__hydratedAllAt },
      ].sort((a, b) => a.start - b.start),
    }));
  };
  const first = await visit();
  if (timeline) {
    console.log(`  timeline of ${url} (ms since navigation; start → first byte → end):`);
    for (const e of first.timeline) {
      const t = (x) => (x === undefined ? '' : `${Math.round(x)}`.padStart(5));
      console.log(`    ${t(e.start)} ${e.first !== undefined ? `→${t(e.first)}` : '       '} →${t(e.end)}  ${e.name.replace(/harness-[0-9a-f]{16}/, 'harness-…')}${e.size ? `  ${kib(e.size)}` : ''}`);
    }
  }
  first.bytes = bytes;
  first.files = files;
  const second = await visit();
  await context.close();
  return { fcp: first.fcp, hydrated: first.hydrated, hydratedAll: first.hydratedAll, wasm: first.wasm, first: first.bytes, files: first.files, second: bytes, secondHydrated: second.hydrated };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x) => `${Math.round(x)} ms`;
const kib = (x) => `${(x / 1024).toFixed(1)} KiB`;

const server = await startServer();
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--disable-background-networking',
    '--disable-component-update', '--no-first-run', '--disable-sync'],
});
let failed = false;
try {
  const [taskId, askingId] = await seed(server);
  console.log(`page-load benchmark: ${bin}${siteDir ? ` serving ${siteDir}` : ' (embedded site)'}${eager ? ', deferred sections hydrated eagerly (--eager)' : ''}`);
  console.log(`profile: ${VIEWPORT.width}x${VIEWPORT.height}, 9 Mbit/s, ${NETWORK.latency} ms, CPU ${CPU_SLOWDOWN}x slower, cold cache, median of ${runs}`);
  const pages = [['/harness', '/harness'], ['task page', `/tasks/${taskId}`], ['task page, open question', `/tasks/${askingId}`]];
  for (const [label, path] of pages) {
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(await measure(browser, server, `${server.base}${path}`));
    const m = Object.fromEntries(['fcp', 'hydrated', 'hydratedAll', 'wasm', 'first', 'second', 'secondHydrated'].map((k) => [k, median(samples.map((s) => s[k]))]));
    const before = BEFORE[label];
    const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
    const checks = [
      m.hydrated < TARGETS.hydratedMs,
      m.first <= FIRST_LOAD_BYTES[label],
      m.second < TARGETS.secondVisitBytes,
    ];
    failed ||= checks.includes(false);
    console.log(`\n${label} (${path})`);
    const was = (k, f) => (before ? `   before ${f(before[k])}` : '');
    console.log(`  first contentful paint  ${ms(m.fcp).padStart(10)}${was('fcp', ms)}`);
    console.log(`  hydrated                ${ms(m.hydrated).padStart(10)}${was('hydrated', ms)}   target < ${TARGETS.hydratedMs} ms  ${verdict(checks[0])}`);
    console.log(`  first load transferred  ${kib(m.first).padStart(10)}${was('first', kib)}   target <= ${kib(FIRST_LOAD_BYTES[label])}  ${verdict(checks[1])}`);
    console.log(`  second visit            ${kib(m.second).padStart(10)}${was('second', kib)}   target < 20 KiB  ${verdict(checks[2])}   (hydrated ${ms(m.secondHydrated)})`);
    console.log(`  deferred sections       ${ms(m.hydratedAll).padStart(10)}   (hydrated after the page is interactive)`);
    console.log(`  wasm downloaded at ${ms(m.wasm)} (the page's last wasm file; the rest to hydration: compile + hydrate at 4x CPU)`);
    console.log(`  runs: hydrated ${samples.map((s) => Math.round(s.hydrated)).join(', ')} ms; deferred sections ${samples.map((s) => Math.round(s.hydratedAll)).join(', ')} ms`);
    if (breakdown) {
      for (const [path, n] of samples[0].files) console.log(`    ${kib(n).padStart(10)}  ${path}`);
    }
  }
} finally {
  await browser.close();
  server.stop();
}
process.exit(failed ? 1 : 0);
