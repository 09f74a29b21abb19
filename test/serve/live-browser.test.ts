/**
 * The live page in real Chromium (Debian's, driven by playwright-core, as the HTML report's own browser test): served by
 * `startServer` over the emulator, it shows the ranking; a signal published to the emulator while the page is open
 * appears without a reload (a new subject in the ranking, a new row in an open drill-down, which stays open). Hostile
 * subjects stay text: no dialog, no script but the page's own, nothing fetched from elsewhere, no console errors.
 */
import { TopicMessageSubmitTransaction } from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type StartServerReturnType } from '../../src/serve/serve-scores.js';
import { createHcs25Client, type Hcs25Client } from '../../src/client.js';
import { createTopic } from '../../src/hedera/tx.js';
import { signalMessageV2Schema } from '../../src/format/schema-v2.js';
import { emulatorConfig, startHarness, tempDir, type Harness } from '../publish/helpers.js';
import { runId, uaid } from '../support/signals.js';
import { SKIP_REASON, hasChromium, launchChromium, watchProblems } from '../support/browser.js';
import { discoverAgents } from '../../src/discover/discover-agents.js';
import { submitMessage } from '../../src/hedera/tx.js';

if (!hasChromium) console.warn(`live-browser.test: ${SKIP_REASON}`);

const HOSTILE = `uaid:aid:x;uid=0;proto=a2a;nativeId=<img/src=x/onerror=alert(1)><script>alert(2)</script>`;
const CALM = uaid('calm.example.com');

let h: Harness;
let client: Hcs25Client;
let server: StartServerReturnType;
let topic: string;
const tmp = tempDir();
let run = 0;

async function publish(subject: string, reachable: boolean, sources?: string[]): Promise<void> {
  const message = signalMessageV2Schema.parse({
    p: 'hcs-25',
    op: 'signal',
    v: 2,
    subject,
    fetchedAt: new Date().toISOString(),
    run: runId(++run),
    signal: 'availability.probe',
    status: 'ok',
    data: { reachable, score: reachable ? 100 : 0, latencyMs: 40 + run, transport: 'a2a' },
    ...(sources && { sources }),
  });
  const tx = new TopicMessageSubmitTransaction().setTopicId(topic).setMessage(JSON.stringify(message));
  await (await tx.execute(h.client)).getReceipt(h.client);
}

beforeAll(async () => {
  if (!hasChromium) return;
  h = await startHarness();
  topic = await createTopic(h.client, { memo: 'hcs-25:0:86400' });
  await publish(HOSTILE, true);
  client = createHcs25Client(emulatorConfig(h, tmp.dir, {}));
  server = await startServer(client, {
    topics: [topic],
    publishers: [h.node.operator.accountId],
    database: 'memory://',
    port: 0,
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await client?.close();
  await h?.close();
  tmp.cleanup();
});

// (No DOM lib in this tsconfig: the browser-side callbacks type what they touch structurally.)
type Win = { liveMarker?: number; document: { documentElement: { dataset: Record<string, string | undefined> } } };

describe('the live page in headless Chromium', () => {
  it.skipIf(!hasChromium)(
    `updates the ranking and an open drill-down as signals arrive, without a reload${hasChromium ? '' : ` (${SKIP_REASON})`}`,
    async () => {
      const score = async (subject: string) =>
        (await fetch(`${server.url}/v1/subjects/${encodeURIComponent(subject)}/score`)).status;
      await until(async () => (await score(HOSTILE)) === 200);

      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
        const problems = watchProblems(page, (u) => u.startsWith(`${server.url}/`));
        await page.goto(`${server.url}/`, { waitUntil: 'load' });
        expect(await page.title()).toBe(`HCS-25 trust scores · topic ${topic}`);
        const rows = page.locator('table.rank tbody tr');
        expect(await rows.count()).toBe(1);
        // The hostile subject is text on the page, not markup.
        expect(await page.locator('#s1 > .uaid').textContent()).toBe(HOSTILE);
        expect(await page.locator('table.rank tbody tr').first().getAttribute('data-subject')).toBe(HOSTILE);
        await page.waitForFunction(
          () => (globalThis as unknown as Win).document.documentElement.dataset.live === 'open',
        );
        // A marker a reload would wipe.
        await page.evaluate(() => ((globalThis as unknown as Win).liveMarker = 42));

        // Open the subject's drill-down, then publish: a second signal about it, and a new subject.
        await page.locator('#s1 details.signals summary').click();
        expect(await page.locator('#s1 tr.sigrow').count()).toBe(1);
        await publish(HOSTILE, false);
        await publish(CALM, true);

        await page.waitForFunction(
          () =>
            (
              globalThis as unknown as { document: { querySelectorAll(q: string): { length: number } } }
            ).document.querySelectorAll('table.rank tbody tr').length === 2,
          undefined,
          { timeout: 30_000 },
        );
        const hostileCard = page.locator('article', { hasText: '<img/src=x/onerror=alert(1)>' });
        await expectEventually(async () => (await hostileCard.locator('tr.sigrow').count()) === 2);
        const order = await rows.evaluateAll((els) =>
          els.map((e) => (e as unknown as { getAttribute(n: string): string | null }).getAttribute('data-subject')),
        );
        // The calm agent (reachable) now outranks the hostile one (one probe of two failed).
        expect(order).toEqual([CALM, HOSTILE]);
        // Still the same document: no reload happened; the drill-down that was open is open again.
        expect(await page.evaluate(() => (globalThis as unknown as Win).liveMarker)).toBe(42);
        expect(
          Number(
            await page.evaluate(() => (globalThis as unknown as Win).document.documentElement.dataset.liveUpdates),
          ),
        ).toBeGreaterThan(0);
        expect(await hostileCard.locator('details.signals').getAttribute('open')).not.toBeNull();
        expect(await page.locator('#live-status').textContent()).toMatch(/^live/);
        expect(problems).toEqual([]);
      } finally {
        await browser.close();
      }
    },
  );
});

describe('names and the search form in headless Chromium', () => {
  it.skipIf(!hasChromium)(
    `shows each subject's registry name (as text), protocol and endpoint; the form filters the ranking${hasChromium ? '' : ` (${SKIP_REASON})`}`,
    async () => {
      const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
      const name = 'Named <b>agent</b>';
      const record = { name, protocol: 'a2a', endpoint: 'https://named.example.com/a2a' };
      await submitMessage(
        h.client,
        registry,
        JSON.stringify({ p: 'hcs-2', op: 'register', metadata: JSON.stringify(record) }),
        undefined,
      );
      let named: string | undefined;
      await until(async () => {
        named = (await discoverAgents(client, { registry })).agents[0]?.subject;
        return named !== undefined;
      });
      await publish(named!, true, [`hcs://2/${registry}`]);
      await until(async () => {
        const res = await fetch(`${server.url}/v1/subjects?q=${encodeURIComponent('named <b>')}`);
        const body = (await res.json()) as { subjects: Array<{ identity: { name: string | null } }> };
        return body.subjects[0]?.identity.name === name;
      });

      const browser = await launchChromium();
      try {
        for (const width of [1280, 390]) {
          const page = await browser.newPage({ viewport: { width, height: 900 } });
          const problems = watchProblems(page, (u) => u.startsWith(`${server.url}/`));
          await page.goto(`${server.url}/`, { waitUntil: 'load' });
          const rows = page.locator('table.rank tbody tr');
          const all = await rows.count();
          expect(all).toBeGreaterThan(1);
          const row = page.locator(`table.rank tbody tr[data-subject="${named}"]`);
          // The name is text, beside the protocol, endpoint and registry entry.
          expect(await row.locator('td.subject a').textContent()).toBe(name);
          expect(await row.locator('.ident').textContent()).toBe(
            `a2a · https://named.example.com/a2a · hcs://2/${registry}#1`,
          );
          expect(await page.locator('td.subject b').count()).toBe(0);

          await page.fill('form.filter input[name=q]', 'NAMED <b');
          await Promise.all([page.waitForURL(/[?&]q=NAMED/), page.click('form.filter button[type=submit]')]);
          expect(await rows.count()).toBe(1);
          expect(await rows.first().getAttribute('data-subject')).toBe(named);
          expect(await page.inputValue('form.filter input[name=q]')).toBe('NAMED <b');
          await page.selectOption('form.filter select[name=protocol]', 'mcp');
          await Promise.all([page.waitForURL(/protocol=mcp/), page.click('form.filter button[type=submit]')]);
          expect(await page.locator('p.warn', { hasText: 'No subject matches these filters.' }).count()).toBe(1);
          await Promise.all([page.waitForURL(/\/(\?topic=[0-9.]+)?$/), page.click('form.filter a')]);
          expect(await rows.count()).toBe(all);
          // Nothing wider than the screen: the form wraps.
          expect(
            await page.evaluate(() => {
              const d = (
                globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
              ).document;
              return d.documentElement.scrollWidth <= d.documentElement.clientWidth;
            }),
          ).toBe(true);
          expect(problems).toEqual([]);
          await page.close();
        }
      } finally {
        await browser.close();
      }
    },
  );
});

async function until(ok: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

const expectEventually = until;
