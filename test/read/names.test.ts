/** `--names FILE` parsing and display names: the forms people have at hand, and names as untrusted text. */
import { describe, expect, it } from 'vitest';
import { displayName, MAX_NAME_LENGTH } from '../../src/report/display.js';
import { parseNamesFile } from '../../src/read/names.js';
import { computeScores } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { T0, probe, uaid } from '../support/signals.js';

const A = uaid('a.example.com');
const B = uaid('b.example.com');

describe('names file', () => {
  it('reads a subject → name object', () => {
    expect(parseNamesFile(JSON.stringify({ [A]: ' Calc ', [B]: 'Files' }), 'n.json')).toEqual({
      bySubject: { [A]: 'Calc', [B]: 'Files' },
      records: [],
    });
  });

  it('reads agent records as a list, as {"agents": [...]} (discover --json) and as JSON lines (hcs25 agents)', () => {
    const records = [
      { name: 'Calc', uaid: A },
      { name: 'Files', subject: B },
      { name: 'new', protocol: 'a2a', endpoint: 'https://n.example.com' },
    ];
    const expected = { bySubject: { [A]: 'Calc', [B]: 'Files' }, records: [records[2]] };
    expect(parseNamesFile(JSON.stringify(records), 'n.json')).toEqual(expected);
    expect(parseNamesFile(JSON.stringify({ registry: {}, agents: records, skipped: [] }), 'n.json')).toEqual(expected);
    expect(parseNamesFile(`${records.map((r) => JSON.stringify(r)).join('\n')}\n\n`, 'n.jsonl')).toEqual(expected);
  });

  it('refuses what it cannot read, naming the line', () => {
    expect(() => parseNamesFile(`${JSON.stringify({ name: 'x', uaid: A })}\nnot json\n`, 'n.jsonl')).toThrow(
      /n\.jsonl: line 2 is not JSON/,
    );
    expect(() => parseNamesFile(JSON.stringify({ 'not-a-uaid': 'x' }), 'n.json')).toThrow(/map subject UAIDs to names/);
    expect(() => parseNamesFile('42', 'n.json')).toThrow(/expected a JSON object/);
  });

  it('names are escaped, trimmed and capped; an empty one is no name', () => {
    expect(displayName('Evil\u001b]0;x\u0007\u202e bot')).toBe('Evil\\x1b]0;x\\x07\\u202e bot');
    expect(displayName('y'.repeat(500))).toHaveLength(MAX_NAME_LENGTH);
    expect(displayName('   ')).toBeUndefined();
  });

  it('labels reach the scores escaped, and order ties by name, then UAID', () => {
    const signals = [probe(A, { seq: 1, at: T0 }), probe(B, { seq: 2, at: T0 })];
    const now = new Date(T0 + 60_000);
    expect(computeScores(signals, DEFAULT_SCORING_CONFIG, { now }).subjects.map((s) => s.subject)).toEqual([A, B]);
    const named = computeScores(signals, DEFAULT_SCORING_CONFIG, { now, labels: { [A]: 'Zed\u001b', [B]: 'Alpha' } });
    expect(named.subjects.map((s) => [s.subject, s.label])).toEqual([
      [B, 'Alpha'],
      [A, 'Zed\\x1b'],
    ]);
  });
});
