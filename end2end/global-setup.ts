// Every UI route needs a session: log in once with the admin token
// through the link `harness serve` prints, and hand the cookie to every test.
import { request, FullConfig } from '@playwright/test';
import { adminToken } from './tests/api';

export const STORAGE_STATE = '.auth/session.json';

export default async function globalSetup(config: FullConfig) {
  const baseURL = config.projects[0].use.baseURL;
  const context = await request.newContext({ baseURL });
  const response = await context.get(`/login?token=${adminToken()}`, { maxRedirects: 0 });
  if (response.status() !== 303) {
    throw new Error(`login failed: ${response.status()} ${await response.text()}`);
  }
  await context.storageState({ path: STORAGE_STATE });
  await context.dispose();
}
