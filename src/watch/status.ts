/**
 * What `hcs25 watch` reports about itself: a status snapshot, rendered as a one-line status, as JSON (`GET /healthz`)
 * and in the Prometheus text exposition format (`GET /metrics`).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export type WatchPhase = 'starting' | 'running' | 'paused-fee-cap' | 'stopping' | 'stopped';

export interface WatchStatus {
  state: WatchPhase;
  /** Why the state is what it is (the fee cap's next day, say). */
  detail?: string;
  registry: string;
  topic: string;
  run?: string;
  cycleStartedAt?: string;
  cycleEndsAt?: string;
  /** How far behind the registry's head the watcher may be, s: RegistryFollower.lagMs (null before the first read). */
  registryLagSeconds: number | null;
  registrySeq: number;
  agentsKnown: number;
  /** Agents waiting to be asked: new or updated ones, and scheduled ones that are due. */
  queue: number;
  evaluating: number;
  counters: {
    cycles: number;
    evaluations: number;
    asks: number;
    signalsJournaled: number;
    signalsPublished: number;
    messagesPublished: number;
    errors: number;
  };
  feesTodayTinybar: string;
  feeCapTinybar: string;
  lastError?: { at: string; message: string };
}

export function statusLine(s: WatchStatus): string {
  const hbar = (t: string) => (Number(t) / 1e8).toFixed(4);
  // Nothing unread is "caught up", not "lag 0s": a number there reads as the watcher falling behind.
  const registry =
    s.registryLagSeconds === null
      ? 'lag —'
      : s.registryLagSeconds < 1
        ? 'caught up'
        : `lag ${Math.round(s.registryLagSeconds)}s`;
  return [
    `watch ${s.state}${s.detail ? ` (${s.detail})` : ''}`,
    `registry #${s.registrySeq} ${registry}`,
    `${s.agentsKnown} agents`,
    `queue ${s.queue}`,
    `asking ${s.evaluating}`,
    `evaluated ${s.counters.evaluations}`,
    `published ${s.counters.signalsPublished}/${s.counters.signalsJournaled} signals`,
    `fees today ${hbar(s.feesTodayTinybar)}/${hbar(s.feeCapTinybar)} ℏ`,
    ...(s.lastError ? [`last error: ${s.lastError.message.slice(0, 80)}`] : []),
  ].join(' · ');
}

type Sample = { labels?: Record<string, string>; value: number };
type Metric = { name: string; help: string; type: 'counter' | 'gauge'; samples: Sample[] };

const PHASES: readonly WatchPhase[] = ['starting', 'running', 'paused-fee-cap', 'stopping', 'stopped'];

/** The Prometheus text exposition format (version 0.0.4): `# HELP`, `# TYPE`, then the samples; counters end in `_total`. */
export function prometheusText(s: WatchStatus): string {
  const c = s.counters;
  const metrics: Metric[] = [
    {
      name: 'hcs25_watch_state',
      help: 'Current state of the watcher (1 for the current one).',
      type: 'gauge',
      samples: PHASES.map((p) => ({ labels: { state: p }, value: p === s.state ? 1 : 0 })),
    },
    {
      name: 'hcs25_watch_registry_lag_seconds',
      help: 'How far behind the registry the watcher may be: 0 while its subscription reports nothing unread.',
      type: 'gauge',
      samples: [{ value: s.registryLagSeconds ?? Number.NaN }],
    },
    {
      name: 'hcs25_watch_registry_sequence',
      help: 'Sequence number of the last registry message folded.',
      type: 'gauge',
      samples: [{ value: s.registrySeq }],
    },
    {
      name: 'hcs25_watch_agents_known',
      help: 'Agents the registry lists now.',
      type: 'gauge',
      samples: [{ value: s.agentsKnown }],
    },
    {
      name: 'hcs25_watch_queue_agents',
      help: 'Agents waiting to be asked (new, updated or due).',
      type: 'gauge',
      samples: [{ value: s.queue }],
    },
    {
      name: 'hcs25_watch_evaluating_agents',
      help: 'Agents being asked now.',
      type: 'gauge',
      samples: [{ value: s.evaluating }],
    },
    {
      name: 'hcs25_watch_cycles_total',
      help: 'Cycles (runs) started by this process.',
      type: 'counter',
      samples: [{ value: c.cycles }],
    },
    {
      name: 'hcs25_watch_evaluations_total',
      help: 'Agent evaluations finished.',
      type: 'counter',
      samples: [{ value: c.evaluations }],
    },
    {
      name: 'hcs25_watch_asks_total',
      help: 'Asks started (probes and questions), counted against the per-host limit.',
      type: 'counter',
      samples: [{ value: c.asks }],
    },
    {
      name: 'hcs25_watch_signals_journaled_total',
      help: 'Signals journaled (evaluated and built).',
      type: 'counter',
      samples: [{ value: c.signalsJournaled }],
    },
    {
      name: 'hcs25_watch_signals_published_total',
      help: 'Signals confirmed on the topic.',
      type: 'counter',
      samples: [{ value: c.signalsPublished }],
    },
    {
      name: 'hcs25_watch_messages_published_total',
      help: 'Messages (packs) confirmed on the topic.',
      type: 'counter',
      samples: [{ value: c.messagesPublished }],
    },
    {
      name: 'hcs25_watch_errors_total',
      help: 'Errors (registry reads, evaluations, publishing).',
      type: 'counter',
      samples: [{ value: c.errors }],
    },
    {
      name: 'hcs25_watch_fees_today_tinybar',
      help: 'Fees paid today (UTC), tinybars.',
      type: 'gauge',
      samples: [{ value: Number(s.feesTodayTinybar) }],
    },
    {
      name: 'hcs25_watch_fee_cap_tinybar',
      help: 'Daily fee cap, tinybars.',
      type: 'gauge',
      samples: [{ value: Number(s.feeCapTinybar) }],
    },
  ];
  const lines: string[] = [];
  for (const m of metrics) {
    lines.push(`# HELP ${m.name} ${m.help}`, `# TYPE ${m.name} ${m.type}`);
    for (const sample of m.samples) lines.push(`${m.name}${labelText(sample.labels)} ${formatValue(sample.value)}`);
  }
  return `${lines.join('\n')}\n`;
}

function labelText(labels: Record<string, string> | undefined): string {
  if (!labels) return '';
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')}"`,
  );
  return `{${parts.join(',')}}`;
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Number.POSITIVE_INFINITY) return '+Inf';
  if (v === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(v);
}

/** Serves `GET /healthz` (JSON) and `GET /metrics` (Prometheus) on 127.0.0.1:`port` (0: any free port). */
export async function startStatusServer(
  port: number,
  snapshot: () => WatchStatus,
  host = '127.0.0.1',
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/healthz') {
      const s = snapshot();
      // Unhealthy (503) only once stopped: a paused watcher (fee cap) is healthy and says why.
      res.writeHead(s.state === 'stopped' ? 503 : 200, {
        'content-type': 'application/json; charset=utf-8',
        'cache-control': 'no-store',
      });
      res.end(JSON.stringify(s));
    } else if (path === '/metrics') {
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'cache-control': 'no-store' });
      res.end(prometheusText(snapshot()));
    } else {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: try /healthz or /metrics\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  server.unref();
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `24h`, `30m`, `90s`, `1.5h`: a period as a user gave it, or a wait. */
export function formatDuration(ms: number): string {
  if (ms % 86_400_000 === 0) return `${ms / 86_400_000}d`;
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(1)}h`;
  return `${Math.round(ms / 1000)}s`;
}
