// Synthetic HCS-25 v1 signal bodies for the consumer and scoring benchmarks.

/** N valid signals: per run, one probe and one math and one science eval for each subject, cycling subjects. */
export function* signalBodies(total, subjects) {
  const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  const ulid = (i) => {
    let tail = '';
    for (let k = 0, v = i; k < 6; k++, v = Math.floor(v / 32)) tail = CROCKFORD[v % 32] + tail;
    return `01JDX3V9W5Q8K6T2N4M7${tail}`;
  };
  const fetchedAt = new Date().toISOString();
  let made = 0;
  for (let run = 0; made < total; run++) {
    for (let s = 0; s < subjects && made < total; s++) {
      const subject = `uaid:aid:bench${s};uid=0;registry=hol;proto=${s % 10 === 0 ? 'mcp' : 'a2a'};nativeId=agent-${s}.example.com`;
      const base = { p: 'hcs-25', op: 'signal', v: 1, subject, fetchedAt, run: ulid(run), sources: ['hcs://2/0.0.1234'] };
      const up = (run + s) % 7 !== 0;
      yield JSON.stringify({ ...base, signal: 'availability.probe', status: up ? 'ok' : 'timeout', data: { reachable: up, latencyMs: 50 + ((run * 31 + s * 17) % 900), transport: 'a2a', ...(up ? { httpStatus: 200 } : {}), score: up ? 100 : 0, ...(up ? {} : { reason: 'timeout' }) } });
      made++;
      if (s % 10 === 0) continue;
      for (const [signal, correct] of [['simple-evals.math', (run + s) % 3 !== 0], ['simple-evals.science', (run * s) % 4 !== 1]]) {
        if (made >= total) break;
        yield JSON.stringify({
          ...base,
          signal,
          status: 'ok',
          data: { outcome: correct ? 'correct' : 'wrong', score: correct ? 100 : 0, questionHash: `hs256:${'A'.repeat(22)}`, answer: '42', responseHash: `sha256:${'B'.repeat(43)}`, compliant: true, latencyMs: 300 + ((run + s) % 700), grader: 'first-token@1', transport: 'a2a' },
        });
        made++;
      }
    }
  }
}

/**
 * Those bodies as topic messages, in order: sequence numbers and consensus timestamps (50 a second over the last day),
 * each timestamp parsed, as the mirror node's JSON is: a flat string (a template literal's result is a rope).
 */
export function* topicRecords(total, subjects) {
  const startS = Math.floor(Date.now() / 1000) - 86_400;
  let seq = 0;
  for (const body of signalBodies(total, subjects)) {
    seq++;
    const seconds = startS + Math.floor(seq / 50);
    yield { sequenceNumber: seq, seconds, consensusTimestamp: JSON.parse(`"${seconds}.${String((seq % 50) * 1000).padStart(9, '0')}"`), body };
  }
}

/**
 * ReadSignals as the reader yields them (in topic order), in batches of `size`. `parse`: the library's consensusMs, to
 * carry the parsed consensus time as the reader does since session 9 (without it, `consensusMs` is left undefined, as
 * in a ReadSignal made by hand, and scoring parses the text).
 */
export function* readSignalBatches(total, subjects, size, parse) {
  let batch = [];
  for (const { sequenceNumber, seconds, consensusTimestamp, body } of topicRecords(total, subjects)) {
    const consensusAt = new Date(seconds * 1000).toISOString();
    batch.push({ sequenceNumber, consensusTimestamp, consensusAt, consensusMs: parse?.(consensusTimestamp), payerAccountId: '0.0.2', index: 0, message: JSON.parse(body) });
    if (batch.length === size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}
