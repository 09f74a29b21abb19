import { describe, expect, it } from 'vitest';
import { csvCell, renderScoresCsv } from '../../src/report/csv.js';
import { compactUaid } from '../../src/report/display.js';
import { HCS25_URL, renderHtmlReport } from '../../src/report/html-report.js';
import { computeScores } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { renderScoreTable, renderSignalHeader, renderSignalLine } from '../../src/report/table.js';
import { HOUR, T0, evalSignal, probe, uaid } from '../support/signals.js';

const HOSTILE = 'uaid:aid:x;uid=0;registry==cmd|calc;proto=a2a;nativeId=<script>alert(1)</script>\u001b[31mred\u202e';
const LONG = uaid(`very-long-agent-name-${'x'.repeat(200)}.example.com`, 'openai');

function sample() {
  const signals = [];
  let seq = 1;
  for (const [i, subject] of [uaid('calc.example.com'), uaid('files.mcp.dev', 'mcp'), HOSTILE, LONG].entries()) {
    for (let run = 0; run < 6; run++) {
      const at = T0 + run * HOUR + i * 1000;
      signals.push(
        probe(subject, { seq: seq++, at, run, reachable: (run + i) % 4 !== 0, latencyMs: 100 + run * 10 + i }),
      );
      if (!subject.includes('proto=mcp')) {
        signals.push(evalSignal(subject, 'math', run % 2 ? 'correct' : 'wrong', { seq: seq++, at: at + 100, run }));
        signals.push(
          evalSignal(subject, 'science', run % 3 ? 'correct' : 'timeout', { seq: seq++, at: at + 200, run }),
        );
      }
    }
  }
  const now = new Date(T0 + 10 * HOUR);
  return {
    signals,
    report: computeScores(signals, DEFAULT_SCORING_CONFIG, { now, topic: '0.0.1234', rejected: { 'bad-json': 1 } }),
  };
}

describe('terminal table', () => {
  it('is ranked, keeps every identifier whole, names the protocol as users do, and neutralises terminal escapes', () => {
    const { report, signals } = sample();
    const text = renderScoreTable(report);
    expect(text).not.toMatch(/[\u001b\u202e]/);
    const rows = text.split('\n').slice(1, 1 + report.subjects.length);
    expect(rows.map((r) => Number(r.trim().split(/\s+/)[1]))).toEqual(report.subjects.map((s) => s.trustScores.total));
    // Written to a file or a pipe nothing is cut: the long native id is there whole.
    expect(text).toContain(`very-long-agent-name-${'x'.repeat(200)}.example.com`);
    expect(text.split('\n')[0]).toMatch(/AVAILABILITY +MATH +SCIENCE +P50\/P95 MS +PROTOCOL +NAME +SUBJECT$/);
    expect(text).toContain('WARNING: no publisher allow-list');
    expect(text).toMatch(/n\/a/);
    for (const line of [renderSignalHeader(), ...signals.map((s) => renderSignalLine(s))]) {
      expect(line).not.toMatch(/[\u001b\u202e]/);
    }
    expect(signals.map((s) => renderSignalLine(s)).join('\n')).toContain(`very-long-agent-name-${'x'.repeat(200)}`);
  });

  it('on an 80-column terminal: leaves out the SUBJECT column and says so, never cutting an id in the middle', () => {
    const { report } = sample();
    const text = renderScoreTable(report, { width: 80 });
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(text).not.toMatch(/SUBJECT +$/m);
    expect(text).toContain('SUBJECT (native ids) left out to fit the terminal');
    expect(text).not.toContain('…');
  });

  it('an HTTP agent shows protocol http (its UAID says rest); a failed probe reads as what happened, not down/ok', () => {
    const subject = uaid('plain.example.com:8080', 'rest');
    const signals = [probe(subject, { seq: 1, at: T0, run: 0, reachable: false, latencyMs: 40 })];
    const report = computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + HOUR) });
    expect(renderScoreTable(report).split('\n')[1]).toMatch(/ http +- +plain\.example\.com:8080$/);
    const line = renderSignalLine(signals[0]!, 'plain agent');
    expect(line).toMatch(/ probe +timeout +40 {2}plain agent · plain\.example\.com:8080$/);
    expect(line).not.toMatch(/down|\/ok/);
  });
});

describe('csv', () => {
  it('quotes and defuses formulas', () => {
    expect(csvCell('=cmd|calc')).toBe("'=cmd|calc");
    expect(csvCell('a,"b"')).toBe('"a,""b"""');
    expect(csvCell(null)).toBe('');
    expect(csvCell(57.5)).toBe('57.5');
  });

  it('one header plus one row per subject, in rank order', () => {
    const { report } = sample();
    const lines = renderScoresCsv(report).trimEnd().split('\r\n');
    expect(lines).toHaveLength(1 + report.subjects.length);
    expect(lines[0]).toMatch(
      /^rank,subject,name,registry,protocol,native_id,trust_score,trust_confidence,score_availability,/,
    );
    expect(renderScoresCsv(report)).toContain(",'=cmd|calc,");
  });
});

describe('html report (string checks; the browser test renders it)', () => {
  it('is self-contained, escapes topic content, and is deterministic', () => {
    const { report, signals } = sample();
    const html = renderHtmlReport(report, signals, { network: 'local' });
    expect(html).toContain(`Content-Security-Policy" content="default-src 'none'`);
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    // Bidi overrides and control characters from a hostile subject cannot reorder or hide what the page shows.
    expect(html).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u202a-\u202e\u2066-\u2069]/);
    // No URL other than the SVG namespace and the link to the HCS-25 text (on a local network no HashScan links).
    const urls = html.match(/\b(?:https?:)?\/\/[^\s"'<>]+/g) ?? [];
    expect([...new Set(urls)].filter((u) => u !== 'http://www.w3.org/2000/svg')).toEqual([HCS25_URL]);
    expect(html.match(/<a href="https:[^"]*"/g)?.every((a) => a === `<a href="${HCS25_URL}"`)).toBe(true);
    expect(html).not.toMatch(/<(?:link|img|iframe|object|embed)\b(?![^>]*href="data:)/);
    expect(renderHtmlReport(report, [...signals].reverse(), { network: 'local' })).toBe(html);
  });

  it('caps the detail cards', () => {
    const { report, signals } = sample();
    const html = renderHtmlReport(report, signals, { maxDetailSubjects: 2 });
    expect(html.match(/<article /g)).toHaveLength(2);
    expect(html).toContain('Details for the top 2 of 4 subjects');
  });

  it('caps the ranking table and the lists of who shares a dot, and says so', () => {
    // Thirty subjects that answered every probe: one score, one confidence, one dot.
    const signals = Array.from({ length: 30 }, (_, i) =>
      probe(uaid(`agent-${String(i).padStart(2, '0')}.example.com`), { seq: i + 1, at: T0 + i }),
    );
    const report = computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + HOUR) });
    const html = renderHtmlReport(report, signals, { maxRankedSubjects: 10 });
    expect(html.match(/<tr data-subject=/g)).toHaveLength(10);
    expect(html).toContain('The top 10 of 30 subjects; <code>hcs25 scores --csv</code>');
    // The dot's title and the line under the chart name twenty, then count the rest.
    expect(html).toContain('#20 agent-19.example.com and 10 more');
    expect(html).toContain('#19, #20 and 10 more');
    expect(html).not.toContain('#21');
    const all = renderHtmlReport(report, signals);
    expect(all.match(/<tr data-subject=/g)).toHaveLength(30);
    expect(all).not.toContain('The top ');
  });
});

describe('compactUaid', () => {
  it('keeps the native id whole and cuts the head of a long UAID; short or foreign ids are only capped', () => {
    const long = uaid(`agent-07-${'n'.repeat(15)}.inference.example.com`);
    const short = compactUaid(long);
    expect(short.length).toBeLessThanOrEqual(80);
    expect(short).toMatch(/^uaid:aid:2ayFqipw6kr…nativeId=agent-07-n+\.inference\.example\.com$/);
    expect(compactUaid(uaid('a.example.com'), 200)).toBe(uaid('a.example.com'));
    expect(compactUaid(`uaid:did:${'z'.repeat(100)}`)).toHaveLength(80);
  });
});
