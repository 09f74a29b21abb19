/**
 * Real Chromium for the page tests (Debian's, driven by playwright-core; CI installs it in `.ci/run`): a launcher and
 * a watch on everything a page must not do (console errors and warnings, uncaught errors, dialogs, stray requests).
 */
import { existsSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);
export const SKIP_REASON = `skipped: no browser at ${CHROMIUM} (install it with: apt-get update && apt-get install -y chromium)`;

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/** What the page did that it must not: filled in as it happens; a test expects it to stay empty. */
export function watchProblems(page: Page, allowedRequest: (url: string) => boolean): string[] {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('request', (req) => {
    if (!allowedRequest(req.url())) problems.push(`request: ${req.url()}`);
  });
  return problems;
}
