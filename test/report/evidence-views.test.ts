import { describe, expect, it } from 'vitest';
import { renderHtmlReport } from '../../src/report/html-report.js';
import { renderScoreTable } from '../../src/report/table.js';
import { computeScores, type ScoreReport } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import type { ReadSignal } from '../../src/read/types.js';
import { HOUR, T0, evalSignal, probe, uaid } from '../support/signals.js';

const MCP = uaid('a-files.mcp.dev', 'mcp');
const AGENT = uaid('b-calc.example.com', 'a2a');
const THIN = uaid('c-thin.example.com', 'a2a');

/** The anchor: an MCP server that only answered probes, an agent that answered 10 of each eval, one that answered 1. */
function anchor(): { report: ScoreReport; signals: ReadSignal[] } {
  const signals: ReadSignal[] = [];
  let seq = 1;
  for (const [subject, answers] of [
    [MCP, 0],
    [AGENT, 10],
    [THIN, 1],
  ] as const) {
    for (let i = 0; i < 10; i++) signals.push(probe(subject, { seq: seq++, at: T0 + i * 1000, run: seq }));
    for (const kind of ['math', 'science'] as const)
      for (let i = 0; i < answers; i++)
        signals.push(evalSignal(subject, kind, 'correct', { seq: seq++, at: T0 + i * 1000, run: seq }));
  }
  return { report: computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + HOUR) }), signals };
}

describe('evidence in the terminal table', () => {
  it('marks what each score rests on and low evidence, with a legend', () => {
    const lines = renderScoreTable(anchor().report).split('\n');
    expect(lines[0]).toMatch(/^ *# +SCORE +CONF +EVID +AVAILABILITY /);
    const row = (name: string) => lines.find((l) => l.endsWith(name))!;
    expect(row('b-calc.example.com')).toMatch(/ 100\.00 +1\.00 +evals +100\.0/);
    expect(row('c-thin.example.com')).toMatch(/ 100\.00 +1\.00 +evals! +100\.0/);
    expect(row('a-files.mcp.dev')).toMatch(/ 100\.00 +1\.00 +avail +100\.0/);
    // Equal scores: the well-evidenced agent, the thin one, then availability alone.
    expect(lines.slice(1, 4).map((l) => l.split(/ +/).at(-1))).toEqual([
      'b-calc.example.com',
      'c-thin.example.com',
      'a-files.mcp.dev',
    ]);
    expect(lines.join(' ').replace(/\s+/g, ' ')).toContain(
      '! low evidence (a component has fewer than 5 observations)',
    );
  });
});

describe('evidence in the HTML report', () => {
  it('badges the score, shows n and the 95% interval per eval, and explains confidence and the interval', () => {
    const { report, signals } = anchor();
    const html = renderHtmlReport(report, signals);
    const rows = html
      .split('<tr data-subject=')
      .slice(1)
      .map((r) => r.slice(0, r.indexOf('</tr>')));
    const rowOf = (subject: string) => rows.find((r) => r.startsWith(`"${subject}"`))!;
    expect(rowOf(MCP)).toContain('>availability only</span>');
    expect(rowOf(MCP)).not.toContain('>low evidence</span>');
    expect(rowOf(THIN)).toContain('>low evidence</span>');
    expect(rowOf(AGENT)).not.toMatch(/availability only|low evidence/);

    const cards = html.split('<article id=').slice(1);
    const cardOf = (subject: string) => cards.find((c) => c.includes(`<div class="uaid">${subject}`))!;
    const agent = cardOf(AGENT);
    expect(agent).toMatch(/eval<\/span> math<\/td><td class="num" data-label="n">10<\/td>/);
    expect(agent).toContain('<td class="num" data-label="95%">72%–100%</td>');
    const thin = cardOf(THIN);
    expect(thin).toContain('<td class="num" data-label="95%">21%–100%</td>');
    expect(thin).toContain('scorebadges"><span class="chip low-ev"');
    expect(html).toContain('A confidence of 0.4 means that only 40% of what the score is built from');
    expect(html).toContain('the 95% interval beside each eval is the range its true success rate lies in');
  });

  it('renders a score stored before evidence existed (served before its rescoring) without badges', () => {
    const { report, signals } = anchor();
    const old = {
      ...report,
      subjects: report.subjects.map(({ evidenceStrength: _, ...s }) => s as ScoreReport['subjects'][number]),
    };
    const html = renderHtmlReport(old, signals);
    expect(html).not.toContain('title="No eval backs this score');
    expect(html).not.toContain('<span class="scorebadges"><span class="chip');
    expect(html).not.toContain('table class="evid');
  });
});
