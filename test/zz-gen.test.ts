import { readFileSync } from 'node:fs';
import { it } from 'vitest';
import { readMessage } from '../src/format/read.js';
import { computeScores } from '../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../src/score/scoring-config.js';
import { scoreRecordV3For } from '../src/score/record-v3.js';
import { buildScoreMessageV3, scoresBatchV3 } from '../src/format/score-v3.js';
import { zlibMessageV3 } from '../src/format/pack-v3.js';
import { buildRevealMessageV3 } from '../src/format/write-v3.js';
import type { ReadSignal } from '../src/read/types.js';
import { questionFor } from '../src/evaluate/runner.js';
import { loadScienceBank } from '../src/evaluate/science.js';
import { decodeRunKey, questionHash, responseHashV2 } from '../src/format/hashing.js';

const page = readFileSync('docs/formats.md', 'utf8');
const section = page.slice(page.indexOf('## Version 2'), page.indexOf('## Reading rules'));
const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
it('gen', () => {
  const pack = blocks[1];
  const reveal = blocks[3];
  const quiz =
    'uaid:aid:9FDuAd9VEDrVK2ygYvXA3eA4ZNoQK5w91S9FT9H5wdchAKW;uid=0;registry=hol;proto=a2a;nativeId=quiz.example.org';
  const calc = pack.subjects[0].id;
  const sigOf = (s: any) => {
    const d = s.d;
    if (s.i === 0) return { i: 0, dt: s.dt, score: d.score, ms: d.latencyMs };
    const e: any = { i: s.i, dt: s.dt, score: d.score };
    if (d.outcome !== 'correct') e.outcome = d.outcome;
    e.q = d.questionHash.slice(6);
    if (d.answer) e.a = d.answer;
    if (!d.compliant && d.responseHash) e.r = d.responseHash.slice(6);
    e.ms = d.latencyMs;
    return e;
  };
  const key = decodeRunKey(reveal.key);
  const bank = loadScienceBank();
  const qm = questionFor('math', quiz, reveal.seed, bank) as any;
  const qs = questionFor('science', quiz, reveal.seed, bank) as any;
  console.log('QUIZ', JSON.stringify(qm), JSON.stringify(qs));
  const reply = `The answer is **${qs.answer}**.`;
  const quizSig = [
    { i: 0, dt: 40, score: 100, ms: 96 },
    {
      i: 1,
      dt: 1310,
      score: 0,
      outcome: 'wrong',
      q: questionHash(key, qm.id).slice(6),
      a: String(qm.expected + 1),
      ms: 1207,
    },
    {
      i: 2,
      dt: 2650,
      score: 100,
      q: questionHash(key, qs.id).slice(6),
      a: qs.answer,
      r: responseHashV2(key, 'simple-evals.a2a_science', quiz, reply).slice(6),
      ms: 1540,
    },
  ];
  console.log('QUIZREPLY', reply);
  const subjects = [
    { id: calc, sig: pack.subjects[0].sig.map(sigOf) },
    { id: quiz, sig: quizSig },
  ];
  const signals = {
    fmt: 'hcs25-tool/3',
    op: 'signals',
    run: pack.run,
    at: pack.at,
    src: pack.src,
    ids: pack.ids,
    subjects,
  };
  const json = JSON.stringify(signals);
  console.log('SIGNALS', Buffer.byteLength(json), json);
  const r = readMessage(json, { encoding: 'utf8' });
  console.log('READ', JSON.stringify(r).slice(0, 300));
  console.log('ZLIB', zlibMessageV3(Buffer.from(json)).toString());
  const read: ReadSignal[] = (r as any).items
    .filter((i: any) => i.kind === 'signal')
    .map((i: any, k: number) => ({
      sequenceNumber: 12,
      consensusTimestamp: '1795255203.000000000',
      consensusAt: '2026-11-21T10:00:03.000Z',
      payerAccountId: '0.0.1001',
      index: i.index,
      message: i.message,
    }));
  const report = computeScores(read, DEFAULT_SCORING_CONFIG, {
    now: new Date('2026-11-21T10:05:00.000Z'),
    topic: '0.0.1002',
    publishers: ['0.0.1001'],
  });
  const src = { topic: '0.0.1002', seq: [12, 12] as [number, number], publishers: ['0.0.1001'] };
  const recs = report.subjects.map((s) => buildScoreMessageV3(scoreRecordV3For(s, src as any)));
  for (const b of recs) console.log('SCORE', b.bytes, b.json);
  console.log('SCORES', JSON.stringify(scoresBatchV3(recs.map((b) => b.message))));
  const rv = buildRevealMessageV3({
    run: reveal.run,
    key: reveal.key,
    seed: reveal.seed,
    generator: reveal.generator,
    grader: reveal.grader,
    bank: reveal.bank,
  } as any);
  console.log('REVEAL', rv.json);
});
