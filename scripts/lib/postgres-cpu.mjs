// CPU time of a PostgreSQL server and its processes, from Linux /proc (nothing elsewhere): a benchmark's database
// server shares the machine's cores with what the benchmark measures.
import { readdirSync, readFileSync } from 'node:fs';

const TICK = 100; // USER_HZ

/**
 * CPU seconds of the server listening on `port`, per kind of process (`backend`, `autovacuum worker`, `checkpointer`,
 * …; the postmaster's own time includes its children that exited), and in all. { total: 0 } off Linux.
 */
export function postgresCpu(port) {
  const procs = [];
  let root;
  try {
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        procs.push({ pid: Number(pid), ppid: Number(f[1]), cpu: (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICK, title: argv[0] ?? '' });
        if (argv[0]?.endsWith('postgres') && argv[argv.indexOf('-p') + 1] === String(port)) root = Number(pid);
      } catch {}
    }
  } catch {
    return { total: 0, byKind: {} };
  }
  if (root === undefined) return { total: 0, byKind: {} };
  const tree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of procs) if (!tree.has(p.pid) && tree.has(p.ppid)) (tree.add(p.pid), (grew = true));
  }
  const byKind = {};
  let total = 0;
  for (const p of procs) {
    if (!tree.has(p.pid)) continue;
    // A backend's title is `postgres: user db host(port) state`; the server's own processes name themselves.
    const kind = p.pid === root ? 'postmaster + exited' : / \d+\.\d+\.\d+\.\d+\(\d+\)| \[local\]/.test(p.title) ? 'backend' : p.title.replace(/^postgres: /, '').trim();
    byKind[kind] = (byKind[kind] ?? 0) + p.cpu;
    total += p.cpu;
  }
  return { total, byKind };
}

/**
 * What ran between two postgresCpu readings, per kind, longest first: `autovacuum worker 1.20 s, backend 0.10 s`. A
 * process that exited in between moves its time to the postmaster's (`postmaster + exited`); the kind it left shows
 * no time then, rather than a negative one.
 */
export function postgresCpuDelta(before, after) {
  const kinds = new Set([...Object.keys(before.byKind), ...Object.keys(after.byKind)]);
  return [...kinds]
    .map((k) => [k, (after.byKind[k] ?? 0) - (before.byKind[k] ?? 0)])
    .filter(([, s]) => s >= 0.005)
    .sort((a, b) => b[1] - a[1])
    .map(([k, s]) => `${k} ${s.toFixed(2)} s`)
    .join(', ');
}
