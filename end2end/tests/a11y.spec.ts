// Issue 15 item 10: axe-core on every page, light and dark, desktop and phone:
// no serious or critical violation (names of controls, contrast AA, …).
import { test, expect } from '@playwright/test';
import AxeBuilder from '@axe-core/playwright';
import { api } from './api';

for (const scheme of ['light', 'dark'] as const) {
  for (const [name, viewport] of [['desktop', { width: 1440, height: 900 }], ['phone', { width: 390, height: 844 }]] as const) {
    test(`axe: no serious violations (${scheme}, ${name})`, async ({ page, request }) => {
      const created = await api(request, 'POST', '/api/tasks', {
        title: `A11y ${Date.now()}`, agent: { provider: 'command', command: ['sh', '-c', 'echo hi; exec sleep 60'], cwd: '/tmp' },
      });
      const id = created.body.id;
      await api(request, 'POST', '/api/internal/harness/ask', { taskId: id, question: 'Proceed with **the plan**?' });
      await page.setViewportSize(viewport);
      await page.emulateMedia({ colorScheme: scheme });
      const problems: string[] = [];
      for (const path of ['/', '/harness', '/tasks', `/tasks/${id}`, '/projects', '/settings']) {
        await page.goto(path);
        await expect(page.locator('body')).toHaveAttribute('data-hydrated', 'true');
        const results = await new AxeBuilder({ page })
          // The terminal draws what the agent prints, in the agent's colours.
          .exclude('.ht-term')
          .analyze();
        for (const v of results.violations) {
          if (v.impact === 'serious' || v.impact === 'critical') {
            problems.push(`${path}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(' | ')}`);
          }
        }
      }
      expect(problems, problems.join('\n')).toEqual([]);
    });
  }
}
