// Small REST client for tests, authenticated with the server's admin token.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { APIRequestContext, expect } from '@playwright/test';

export function adminToken(): string {
  const dir = process.env.HARNESS_DATA_DIR;
  if (!dir) throw new Error('HARNESS_DATA_DIR is not set (run through scripts/e2e.sh)');
  return readFileSync(join(dir, 'secrets', 'admin.token'), 'utf8').trim();
}

export async function api(request: APIRequestContext, method: string, path: string, data?: unknown) {
  const response = await request.fetch(path, {
    method,
    data,
    headers: { Authorization: `Bearer ${adminToken()}` },
  });
  const text = await response.text();
  return { status: response.status(), body: text ? JSON.parse(text) : null };
}

export async function createTask(request: APIRequestContext, title: string): Promise<string> {
  const { status, body } = await api(request, 'POST', '/api/tasks', {
    title,
    agent: { provider: 'command', command: ['true'] },
  });
  expect(status).toBe(201);
  return body.id;
}
