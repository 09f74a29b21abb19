import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROTOCOLS, type Agent } from '../../src/core/agent.js';
import { AgentTable } from '../../src/watch/agent-table.js';

const SOURCE = 'hcs://2/0.0.1234';

const agentArb = (subjects: string[]) =>
  fc.record(
    {
      subject: fc.constantFrom(...subjects),
      name: fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ minLength: 60, maxLength: 400 })),
      protocol: fc.constantFrom(...PROTOCOLS),
      endpoint: fc.webUrl(),
      inboundTopicId: fc.constant('0.0.77'),
      accountId: fc.constant('0.0.99'),
      model: fc.string({ maxLength: 8 }),
      source: fc.constantFrom(SOURCE, 'file:agents.json'),
      registrySeq: fc.oneof(fc.nat(), fc.constant(2 ** 40 + 3)),
    },
    { requiredKeys: ['subject', 'name', 'protocol'] },
  ) as fc.Arbitrary<Agent>;

type Op = { t: 'set'; agent: Agent; seq: number } | { t: 'delete'; subject: string } | { t: 'flag'; subject: string; on: boolean } | { t: 'clear' };

describe('AgentTable', () => {
  it('holds what a Map of subject → agent would, across sets, updates and deletes (rows kept by updates, generations changed by deletes)', () => {
    // Subjects with UTF-8 of every width and shared prefixes: equal hashes are told apart by their bytes.
    const subjects = [...Array.from({ length: 40 }, (_, i) => `uaid:aid:${'x'.repeat(i % 7)}${i};uid=0;proto=a2a`), 'é', 'e\u0301', '日本', '🦊', ''];
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 6, arbitrary: fc.record({ t: fc.constant('set' as const), agent: agentArb(subjects), seq: fc.nat() }) },
      { weight: 3, arbitrary: fc.record({ t: fc.constant('delete' as const), subject: fc.constantFrom(...subjects) }) },
      { weight: 2, arbitrary: fc.record({ t: fc.constant('flag' as const), subject: fc.constantFrom(...subjects), on: fc.boolean() }) },
      { weight: 1, arbitrary: fc.record({ t: fc.constant('clear' as const) }) },
    );
    fc.assert(
      // Chunks of 64–1,024 bytes: records are moved as chunks empty, and some records take a chunk of their own.
      fc.property(fc.array(op, { minLength: 20, maxLength: 400, size: 'max' }), fc.integer({ min: 64, max: 1_024 }), (ops, chunkBytes) => {
        const table = new AgentTable(SOURCE, chunkBytes);
        const model = new Map<string, { agent: Agent; seq: number; row: number; generation: number; flag: boolean }>();
        for (const o of ops) {
          if (o.t === 'set') {
            const before = model.get(o.agent.subject);
            const row = table.set(o.agent, o.seq);
            if (before) expect(row).toBe(before.row);
            model.set(o.agent.subject, { agent: o.agent, seq: o.seq, row, generation: table.generation(row), flag: before?.flag ?? false });
          } else if (o.t === 'delete') {
            const before = model.get(o.subject);
            expect(table.delete(o.subject)).toBe(before !== undefined);
            if (before) {
              expect(table.generation(before.row)).not.toBe(before.generation);
              expect(table.at(before.row)).toBeUndefined();
            }
            model.delete(o.subject);
          } else if (o.t === 'flag') {
            table.setFlag(o.subject, 1, o.on);
            const m = model.get(o.subject);
            if (m) m.flag = o.on;
          } else {
            table.clearFlag(1);
            for (const m of model.values()) m.flag = false;
          }
        }
        expect(table.size).toBe(model.size);
        for (const s of subjects) {
          const m = model.get(s);
          expect(table.has(s)).toBe(m !== undefined);
          expect(table.get(s)).toEqual(m?.agent);
          expect(table.changedSeq(s)).toBe(m?.seq);
          expect(table.hasFlag(s, 1)).toBe(m?.flag ?? false);
          if (m) {
            expect(table.rowOf(s)).toBe(m.row);
            expect(table.subjectAt(m.row)).toBe(s);
          } else expect(table.rowOf(s)).toBe(-1);
        }
        expect(new Set(table.keys())).toEqual(new Set(model.keys()));
        expect([...table.values()].sort((a, b) => (a.subject < b.subject ? -1 : 1))).toEqual([...model.values()].map((m) => m.agent).sort((a, b) => (a.subject < b.subject ? -1 : 1)));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps what it holds bounded by what is live: records replaced or deleted are reclaimed chunk by chunk', () => {
    const table = new AgentTable(SOURCE);
    const agent = (i: number, v: number): Agent => ({
      subject: `uaid:aid:${i.toString(36).padStart(40, 'z')};uid=0;registry=self;proto=openai;nativeId=a${i}.test.invalid`,
      name: `agent-${i}-v${v}`,
      protocol: 'openai',
      endpoint: `http://a${i}.test.invalid/v${v}`,
      model: 'm',
      source: SOURCE,
      registrySeq: i,
    });
    for (let i = 0; i < 5_000; i++) table.set(agent(i, 0), i);
    const once = table.bytes;
    // Every agent updated 20 times, then half of them deleted and registered again.
    for (let v = 1; v <= 20; v++) for (let i = 0; i < 5_000; i++) table.set(agent(i, v), v);
    for (let i = 0; i < 5_000; i += 2) table.delete(agent(i, 20).subject);
    for (let i = 0; i < 5_000; i += 2) table.set(agent(i, 21), 21);
    expect(table.size).toBe(5_000);
    expect(table.bytes).toBeLessThan(once * 2);
    for (let i = 0; i < 5_000; i++) expect(table.get(agent(i, 0).subject)).toEqual(agent(i, i % 2 === 0 ? 21 : 20));
  });

  it('gives no row, agent or subject for a row never used or freed', () => {
    const table = new AgentTable();
    expect(table.at(0)).toBeUndefined();
    expect(table.subjectAt(-1)).toBeUndefined();
    const a: Agent = { subject: 's', name: 'n', protocol: 'http', endpoint: 'http://x.invalid/' };
    const row = table.set(a);
    expect(table.at(row)).toEqual(a);
    expect(table.changedSeq('s')).toBeUndefined();
    table.delete('s');
    expect(table.subjectAt(row)).toBeUndefined();
    expect([...table.keys()]).toEqual([]);
  });
});
