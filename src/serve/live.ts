/**
 * The live page at `/`: the HTML report (report/html-report.ts, the one renderer) over what the store holds, plus
 * one small same-origin script that follows `/v1/events` and, when a topic it shows gets new data, fetches the
 * re-rendered page and swaps its body in place: no reload, open drill-downs stay open, the scroll position stays.
 * The page is bounded like every answer: the top of the ranking, the newest signals and the 30-day history of the
 * subjects it details, and the newest runs with their reveal and verification.
 */
import { renderHtmlReport } from '../report/html-report.js';
import { computeScores, type ScoreReport } from '../score/scores.js';
import type { ScoringConfig } from '../score/scoring-config.js';
import type { ReadSignal } from '../read/types.js';
import type { ServeStore, SubjectFilter } from './store/types.js';
import { active } from '../report/html-identity.js';
import { publisherBreakdown, type PublisherRow } from './publisher-scores.js';
import { messageLinks } from '../config/networks.js';

/** What the page's search form filters by. */
export type LiveFilter = Pick<SubjectFilter, 'q' | 'protocol' | 'registry' | 'minScore'>;
import type { SubjectHistory } from '../score/history.js';

export interface LivePage {
  page(topic: string, filter?: LiveFilter): Promise<string>;
  script: string;
}

export interface LivePageOptions {
  store: ServeStore;
  /** The revision the page's ETag names (ServeEvents.revision): one rendering per revision. */
  revision: () => Promise<number>;
  scoring: ScoringConfig;
  publishers: readonly string[];
  network?: string;
  /** The mirror node's REST base: each signal links to its message there (and on HashScan, on public networks). */
  mirrorRestUrl?: string;
  /** Newest runs listed with their reveal and verification (default 20). */
  maxRuns?: number;
  /** Subjects in the ranking (default 500) and with a detail card (default 30). */
  maxSubjects?: number;
  maxDetailSubjects?: number;
  /** Newest signals drawn per detailed subject (default 200). */
  maxSignals?: number;
  /** The clock time the page is rendered for (default: the system clock; tests fix it). */
  now?: () => Date;
}

export const LIVE_SCRIPT_PATH = '/live.js';
/** Renderings kept (one per topic and filter asked for). */
const MAX_RENDERINGS = 64;

export function livePage(options: LivePageOptions): LivePage {
  const { store, scoring } = options;
  const network = {
    ledger: options.network ?? 'local',
    ...(options.mirrorRestUrl !== undefined && { mirrorRestUrl: options.mirrorRestUrl }),
  };
  const maxSubjects = options.maxSubjects ?? 500;
  const maxDetail = options.maxDetailSubjects ?? 30;
  const maxSignals = options.maxSignals ?? 200;
  const maxRuns = options.maxRuns ?? 20;
  // One rendering per topic, filter and store revision: a page open in many browsers is rendered once per change.
  const cache = new Map<string, { revision: string; html: Promise<string> }>();

  async function render(topic: string, filter: LiveFilter): Promise<string> {
    const status = (await store.topics()).find((t) => t.topic === topic);
    const ranked = await store.listSubjects({ ...filter, topic }, { limit: maxSubjects });
    const signals: ReadSignal[] = [];
    const history = new Map<string, SubjectHistory>();
    const now = options.now?.() ?? new Date();
    for (const s of ranked.items.slice(0, maxDetail)) {
      signals.push(...(await store.subjectSignals(s.subject, { topic, limit: maxSignals })).items);
      const h = await store.subjectHistory(s.subject, { topic, window: '30d', now });
      if (h) history.set(s.subject, h);
    }
    const runs = await store.runs({ topic, order: 'desc', limit: maxRuns });
    // Whose reports the score mixes, for the detailed subjects scored from several publishers (one subject's signals each).
    const publishers = new Map<string, PublisherRow[]>();
    for (const s of ranked.items.slice(0, maxDetail)) {
      if (s.score.counts.publishers < 2) continue;
      const own = await store.subjectSignalsOf(topic, s.subject);
      publishers.set(s.subject, publisherBreakdown(own, { scoring, now, topic }));
    }
    // The report's header fields (window, freshness, allow-list) exactly as `hcs25 scores` computes them.
    const head = computeScores([], scoring, {
      now,
      topic,
      publishers: options.publishers,
      rejected: status?.counts.rejected ?? {},
    });
    // The page names subjects by their registry entry's name (beside the UAID, as `hcs25 scores` does).
    const subjects = ranked.items.map((row) =>
      row.identity.name !== null && row.score.label === undefined
        ? { ...row.score, label: row.identity.name }
        : row.score,
    );
    const report: ScoreReport = {
      ...head,
      counts: { ...head.counts, subjects: subjects.length, signals: status?.counts.signals ?? 0 },
      subjects,
    };
    const more =
      ranked.next !== null
        ? `Live view of the top ${subjects.length} subjects; the API (/v1/subjects) pages through all of them.`
        : subjects.length === 0 && active(filter)
          ? 'No subject matches these filters.'
          : undefined;
    return renderHtmlReport(report, signals, {
      ...(options.network !== undefined && { network: options.network }),
      scoring,
      maxDetailSubjects: maxDetail,
      maxSignalRows: maxSignals,
      liveScript: LIVE_SCRIPT_PATH,
      publishers,
      history,
      ...(more && { notice: more }),
      identities: new Map(ranked.items.map((row) => [row.subject, row.identity])),
      filters: { topic, ...filter },
      ...(options.mirrorRestUrl !== undefined && { mirrorRestUrl: options.mirrorRestUrl }),
      runs: runs.items.map(({ reveal, topic: _topic, ...run }) => ({
        ...run,
        links: reveal && messageLinks(network, topic, reveal.sequenceNumber, reveal.consensusTimestamp),
      })),
      runsMore: runs.next !== null,
    });
  }

  return {
    script: LIVE_SCRIPT,
    async page(topic, filter = {}) {
      const revision = String(await options.revision());
      const key = JSON.stringify([topic, filter.q, filter.protocol, filter.registry, filter.minScore]);
      const hit = cache.get(key);
      if (hit && hit.revision === revision) return hit.html;
      const html = render(topic, filter);
      // Bounded: any query string makes a key; the least recently rendered goes first.
      cache.delete(key);
      cache.set(key, { revision, html });
      if (cache.size > MAX_RENDERINGS) cache.delete(cache.keys().next().value!);
      html.catch(() => cache.delete(key));
      return html;
    },
  };
}

/*
 * Runs in the browser. It never builds HTML from data: the server renders (and escapes) the page, the script parses
 * it with DOMParser (which runs no script) and moves the parsed nodes in. Status text is set with textContent.
 */
const LIVE_SCRIPT = `'use strict';
(() => {
  const params = new URLSearchParams(location.search);
  const topic = params.get('topic');
  const status = document.createElement('div');
  status.id = 'live-status';
  status.setAttribute('role', 'status');
  status.style.cssText = 'position:fixed;right:12px;bottom:12px;padding:4px 10px;border-radius:12px;background:#14172b;color:#fff;font:12px system-ui,sans-serif;opacity:.85;z-index:9';
  let updates = 0;
  let busy = false;
  let again = false;
  const show = (text) => { status.textContent = text; if (!status.isConnected) document.body.appendChild(status); };

  let last = 0;
  let timer = 0;
  // At most one re-render a second: a topic being indexed changes many times a second.
  async function refresh() {
    if (busy) { again = true; return; }
    const wait = last + 1000 - Date.now();
    if (wait > 0) { if (!timer) timer = setTimeout(() => { timer = 0; refresh(); }, wait); return; }
    busy = true;
    last = Date.now();
    try {
      const res = await fetch(location.pathname + location.search, { headers: { Accept: 'text/html' }, cache: 'no-cache' });
      if (!res.ok) throw new Error('HTTP ' + res.status);
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      // Drill-downs stay open for their subject, wherever the new ranking puts its card.
      const subjectOf = (article) => article.querySelector('.uaid')?.textContent;
      const open = new Set([...document.querySelectorAll('article details[open]')].map((d) => subjectOf(d.closest('article'))));
      const x = scrollX, y = scrollY;
      document.body.replaceChildren(...doc.body.childNodes);
      for (const article of document.querySelectorAll('article')) if (open.has(subjectOf(article))) article.querySelector('details')?.setAttribute('open', '');
      scrollTo(x, y);
      updates++;
      document.documentElement.dataset.liveUpdates = String(updates);
      show('live · updated ' + new Date().toLocaleTimeString());
    } catch (e) {
      show('live · update failed, retrying');
      setTimeout(refresh, 2000);
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  const events = new EventSource('/v1/events' + (topic ? '?topic=' + encodeURIComponent(topic) : ''));
  events.addEventListener('open', () => { document.documentElement.dataset.live = 'open'; show('live'); });
  events.addEventListener('error', () => { document.documentElement.dataset.live = 'reconnecting'; show('live · reconnecting'); });
  // New signals (indexed) and their scores (a revision after rescoring) both change what the page shows.
  events.addEventListener('indexed', refresh);
  events.addEventListener('revision', refresh);
  events.addEventListener('lag', (e) => {
    const data = JSON.parse(e.data);
    status.title = 'topic ' + data.topic + ': lag ' + (data.lagMs == null ? 'unknown' : (data.lagMs / 1000).toFixed(1) + ' s') + ' (' + (data.source || 'not indexed yet') + ')';
  });
})();
`;
