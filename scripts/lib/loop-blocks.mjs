// Event-loop blocks of a benchmark's server process, each with what filled it: the main thread's own CPU time,
// its time waiting for a core (Linux /proc schedstat: the machine's other processes, the load generator among
// them), the GC pauses inside it and, with a CPU profile, the code that ran. A slow answer's cause is then told apart:
// code of ours, a GC pause, or a core taken by another process.
import { closeSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';

const GC_KINDS = { 1: 'scavenge', 2: 'mark-compact', 4: 'incremental marking', 8: 'weak callbacks' };
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** The main thread's [ns on a core, ns runnable but waiting for one], or null off Linux. */
export function schedstatReader() {
  let fd;
  try {
    fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
  } catch {
    return { read: () => null, close: () => {} };
  }
  const buf = Buffer.alloc(128);
  return {
    read() {
      const text = buf.latin1Slice(0, readSync(fd, buf, 0, buf.length, 0));
      const [run, wait] = text.split(' ');
      return [Number(run), Number(wait)];
    },
    close: () => closeSync(fd),
  };
}

/**
 * Starts watching: a timer every `tickMs`; a tick later than `tickMs + thresholdMs` is a block. With `profile`, a V8
 * CPU profile (sampling every `sampleUs`) runs meanwhile, through the inspector, and each block's samples are named.
 * `stop()` resolves with { blocks (longest first), count, sums, profiled }.
 */
export async function traceBlocks({ thresholdMs = 10, tickMs = 5, profile = false, sampleUs = 250 } = {}) {
  const sched = schedstatReader();
  const blocks = [];
  const gcs = [];
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ startMs: e.startTime, ms: e.duration, kind: GC_KINDS[e.detail?.kind] ?? 'gc' });
  });
  observer.observe({ entryTypes: ['gc'] });
  let session;
  if (profile) {
    const { Session } = await import('node:inspector');
    session = new Session();
    session.connect();
    const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (err, r) => (err ? reject(err) : resolve(r))));
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: sampleUs });
    await post('Profiler.start');
    session.postAsync = post;
  }
  const { performance } = await import('node:perf_hooks');
  let last = nowUs();
  let lastPerf = performance.now();
  let lastSched = sched.read();
  const timer = setInterval(() => {
    const t = nowUs();
    const s = sched.read();
    const gapMs = (t - last) / 1000;
    if (gapMs > tickMs + thresholdMs) {
      blocks.push({
        startUs: last,
        endUs: t,
        startPerfMs: lastPerf,
        ms: gapMs - tickMs,
        cpuMs: s && lastSched ? (s[0] - lastSched[0]) / 1e6 : null,
        waitMs: s && lastSched ? (s[1] - lastSched[1]) / 1e6 : null,
      });
    }
    last = t;
    lastPerf = performance.now();
    lastSched = s;
  }, tickMs);
  const started = nowUs();

  return {
    async stop() {
      clearInterval(timer);
      const seconds = (nowUs() - started) / 1e6;
      // Entries observed so far are delivered asynchronously: let them arrive.
      await new Promise((resolve) => setImmediate(resolve));
      observer.disconnect();
      sched.close();
      for (const b of blocks) {
        const endPerf = b.startPerfMs + (b.endUs - b.startUs) / 1000;
        const inside = gcs.filter((g) => g.startMs < endPerf && g.startMs + g.ms > b.startPerfMs);
        b.gcMs = inside.reduce((a, g) => a + g.ms, 0);
        b.gcKinds = [...new Set(inside.map((g) => g.kind))];
      }
      if (session) {
        const { profile: p } = await session.postAsync('Profiler.stop');
        session.disconnect();
        nameSamples(p, blocks);
      }
      const sum = (key) => blocks.reduce((a, b) => a + (b[key] ?? 0), 0);
      return {
        seconds,
        count: blocks.length,
        sums: { ms: sum('ms'), cpuMs: sum('cpuMs'), waitMs: sum('waitMs'), gcMs: sum('gcMs') },
        blocks: blocks.sort((a, b) => b.ms - a.ms).map(({ startUs, endUs, startPerfMs, ...rest }) => ({ atS: (startUs - started) / 1e6, ...rest })),
        profiled: Boolean(session),
      };
    },
  };
}

/**
 * Names what the samples inside each block ran: the leaf function, and the nearest frame of our code or of a
 * database client (so a WASM or JSON frame says whose it is). Missing samples are time the thread did not run.
 */
function nameSamples(p, blocks) {
  const nodes = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = new Map();
  const frameName = (f) => `${f.functionName || '(anonymous)'}${f.url ? ` ${basename(f.url)}:${f.lineNumber + 1}` : ''}`;
  const ours = (url) => /\/dist\/|bench-serve|node_modules\/(pg|pg-protocol|@electric-sql)\//.test(url);
  const nameOf = (id) => {
    let cached = label.get(id);
    if (cached) return cached;
    const leaf = nodes.get(id).callFrame;
    let name = frameName(leaf);
    if (!ours(leaf.url) && leaf.url !== '') {
      for (let up = parent.get(id); up !== undefined; up = parent.get(up)) {
        const f = nodes.get(up).callFrame;
        if (ours(f.url)) {
          name += ` ← ${frameName(f)}`;
          break;
        }
      }
    } else if (leaf.url === '' && !leaf.functionName.startsWith('(')) {
      for (let up = parent.get(id); up !== undefined; up = parent.get(up)) {
        const f = nodes.get(up).callFrame;
        if (f.url) {
          name += ` ← ${frameName(f)}`;
          break;
        }
      }
    }
    label.set(id, name);
    return name;
  };
  let t = p.startTime;
  const times = p.timeDeltas.map((d) => (t += d));
  for (const b of blocks) {
    const counts = new Map();
    let n = 0;
    for (let i = 0; i < p.samples.length; i++) {
      if (times[i] < b.startUs || times[i] > b.endUs) continue;
      n++;
      const name = nameOf(p.samples[i]);
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    b.samples = n;
    b.ran = [...counts].sort((x, y) => y[1] - x[1]).slice(0, 4).map(([name, k]) => `${name} ${Math.round((100 * k) / Math.max(1, n))}%`);
  }
}

/** One line per block (the longest `top`), and a sum line. */
export function describeBlocks(r, top = 5) {
  const f = (v) => (v === null || v === undefined ? '?' : v.toFixed(0));
  const lines = [
    `${r.count} event-loop blocks > 10 ms in ${r.seconds.toFixed(1)} s, ${f(r.sums.ms)} ms in all: main thread on a core ${f(r.sums.cpuMs)} ms, waiting for a core ${f(r.sums.waitMs)} ms, GC ${f(r.sums.gcMs)} ms`,
  ];
  // The longest, and those longest on a core (the server's own work, not a core taken by another process).
  const byCpu = [...r.blocks].sort((a, b) => (b.cpuMs ?? 0) - (a.cpuMs ?? 0)).slice(0, top);
  const shown = [...new Set([...r.blocks.slice(0, top), ...byCpu])];
  for (const b of shown) {
    lines.push(
      `  ${b.ms.toFixed(0)} ms at ${b.atS.toFixed(2)} s: on a core ${f(b.cpuMs)} ms, waiting for a core ${f(b.waitMs)} ms, GC ${f(b.gcMs)} ms${b.gcKinds.length ? ` (${b.gcKinds.join(', ')})` : ''}` +
        (b.ran ? `; ran (${b.samples} samples): ${b.ran.join('; ')}` : ''),
    );
  }
  return lines;
}
