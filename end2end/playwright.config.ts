import { defineConfig } from '@playwright/test';
import { STORAGE_STATE } from './global-setup';

// The server is started by scripts/e2e.sh, which exports BASE_URL and
// HARNESS_DATA_DIR (for the admin token). Browsers come from Debian, never
// downloaded: executablePath is /usr/bin/chromium unless CHROMIUM_PATH says so.
export default defineConfig({
  testDir: './tests',
  // Logs in once (the UI needs a session on every bind); tests reuse the cookie.
  globalSetup: './global-setup.ts',
  // Generous for a 2-core CI machine that is still busy (the CI run of
  // stop 38 lost a control test there that passes 8 of 8 here under load 8):
  // a wait ends as soon as its condition holds, so only a failure is slower.
  timeout: 45_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  // One retry in CI only, and the list reporter names a test that needed it
  // ("flaky"): a known, unresolved flake — the desktop "edit a project" case
  // saw six wasm `unreachable` page errors once in a full ./test.sh run
  // (2026-12-04; 0 of 29 runs alone or under CPU load). Its suspect (every row's Workbench cell
  // awaited a resource in a Suspend inside the list each live change rebuilds) is gone and
  // projects.spec.ts has regression cases with delayed reads; the retry stays until full runs
  // show the flake gone. Locally a flake fails.
  retries: process.env.CI ? 1 : 0,
  reporter: [['list']],
  outputDir: 'test-results',
  use: {
    baseURL: process.env.BASE_URL ?? 'http://127.0.0.1:7700',
    storageState: STORAGE_STATE,
    browserName: 'chromium',
    screenshot: 'only-on-failure',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic',
        '--disable-background-networking', '--disable-component-update',
        '--no-first-run', '--disable-sync',
      ],
    },
  },
});
