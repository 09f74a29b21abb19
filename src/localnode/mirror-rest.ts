/**
 * Mirror node REST (default port 5551, node:http) with the real shapes: topic messages (filters, order, limit
 * capped at 100, `links.next` by timestamp whenever a page is full), single messages, topics, accounts,
 * transactions and the exchange rate. Errors are `{"_status":{"messages":[{"message":…}]}}`.
 * Built for paging 100k messages: per-topic arrays, binary search, cached per-message JSON.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { z } from 'zod';
import {
  entityId,
  parseEntityId,
  parseTsString,
  parseTxId,
  statusName,
  tsString,
  txIdKey,
  txIdMirror,
  NS_PER_S,
} from './codec.js';
import { EXCHANGE_RATE } from './fees.js';
import { keyToMirror } from './keys.js';
import { longZeroAddress } from './queries.js';
import { MIRROR_NAMES } from './records.js';
import { RUNNING_HASH_VERSION } from './running-hash.js';
import type { Account, LedgerState, Topic, TopicMessage, TxRecord } from './state.js';
import { firstIndexAfter, firstIndexAtOrAfter, visibleCount } from './topic-index.js';

export const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 25;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const invalid = (name: string): HttpError => new HttpError(400, `Invalid parameter: ${name}`);
const notFound = (): HttpError => new HttpError(404, 'Not found');

const OP_VALUE = /^(?:(eq|ne|gt|gte|lt|lte):)?([^:]+)$/;
const opValue = z.string().regex(OP_VALUE);
const seqValue = z.string().regex(/^\d{1,19}$/);
const limitValue = z.string().regex(/^\d{1,10}$/);
const orderValue = z.enum(['asc', 'desc']);
const encodingValue = z.enum(['base64', 'utf-8', 'utf8']);

interface Filter {
  op: 'eq' | 'gt' | 'gte' | 'lt' | 'lte';
  value: string;
}

function parseFilter(name: string, raw: string): Filter {
  if (!opValue.safeParse(raw).success) throw invalid(name);
  const [, op = 'eq', value = ''] = OP_VALUE.exec(raw) ?? [];
  if (op === 'ne') throw invalid(name);
  return { op: op as Filter['op'], value };
}

/** Query parameters in request order, grouped by name (the mirror rebuilds `links.next` from them). */
type Query = Array<[string, string[]]>;

function parseQuery(url: URL, allowed: readonly string[]): Query {
  const q: Query = [];
  for (const [k, v] of url.searchParams) {
    if (!allowed.includes(k)) throw new HttpError(400, `Unknown query parameter: ${k}`);
    const group = q.find(([name]) => name === k);
    if (group) group[1].push(v);
    else q.push([k, [v]]);
  }
  return q;
}

const values = (q: Query, name: string): string[] => q.find(([k]) => k === name)?.[1] ?? [];
const last = (q: Query, name: string): string | undefined => values(q, name).at(-1);

function parseLimit(q: Query): number {
  const raw = last(q, 'limit');
  if (raw === undefined) return DEFAULT_LIMIT;
  if (!limitValue.safeParse(raw).success || Number(raw) < 1) throw invalid('limit');
  return Math.min(Number(raw), MAX_LIMIT);
}

function parseOrder(q: Query, fallback: 'asc' | 'desc'): 'asc' | 'desc' {
  const raw = last(q, 'order');
  if (raw === undefined) return fallback;
  const r = orderValue.safeParse(raw.toLowerCase());
  if (!r.success) throw invalid('order');
  return r.data;
}

/** True for `encoding=utf-8`; base64 is the default. */
function parseUtf8(q: Query): boolean {
  const raw = last(q, 'encoding');
  if (raw === undefined) return false;
  const r = encodingValue.safeParse(raw.toLowerCase());
  if (!r.success) throw invalid('encoding');
  return r.data !== 'base64';
}

/** `links.next`: same query, with the same-direction timestamp bound replaced by the last row's timestamp. */
function nextLink(path: string, q: Query, order: 'asc' | 'desc', lastTs: string): string {
  const pattern = order === 'asc' ? /^gte?:/ : /^lte?:/;
  const bound = `${order === 'asc' ? 'gt' : 'lt'}:${lastTs}`;
  const groups: Query = q.map(([k, v]) => [k, [...v]]);
  const ts = groups.find(([k]) => k === 'timestamp');
  if (!ts) groups.push(['timestamp', [bound]]);
  else {
    const kept = ts[1].filter((v) => !pattern.test(v));
    ts[1] = [...kept, bound];
  }
  const enc = (s: string): string => encodeURIComponent(s).replace(/%3A/gi, ':');
  return `${path}?${groups.flatMap(([k, vs]) => vs.map((v) => `${enc(k)}=${enc(v)}`)).join('&')}`;
}

function chunkJson(m: TopicMessage): unknown {
  if (!m.chunk) return null;
  const i = m.chunk.initialTxId;
  return {
    initial_transaction_id: {
      account_id: entityId(i.payer),
      nonce: i.nonce,
      scheduled: i.scheduled,
      transaction_valid_start: tsString(i.validStartNs),
    },
    number: m.chunk.number,
    total: m.chunk.total,
  };
}

function messageJson(m: TopicMessage, utf8: boolean): string {
  if (!utf8 && m.json) return m.json;
  const json = JSON.stringify({
    chunk_info: chunkJson(m),
    consensus_timestamp: tsString(m.ns),
    message: utf8 ? m.message.toString('utf8') : m.message.toString('base64'),
    payer_account_id: entityId(m.payer),
    running_hash: m.runningHash.toString('base64'),
    running_hash_version: RUNNING_HASH_VERSION,
    sequence_number: m.seq,
    topic_id: entityId(m.topic),
  });
  if (!utf8) m.json = json;
  return json;
}

/** JSON with bigint written as a plain number (balances above 2^53 stay exact). */
function stringify(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? `__bigint__${v}` : v)).replace(
    /"__bigint__(-?\d+)"/g,
    '$1',
  );
}

export interface MirrorRestDeps {
  state: LedgerState;
  lagMs(): number;
}

export class MirrorRest {
  constructor(private readonly deps: MirrorRestDeps) {}

  private get state(): LedgerState {
    return this.deps.state;
  }

  private visible(wallMs: number): boolean {
    return wallMs + this.deps.lagMs() <= Date.now();
  }

  private topicOrNull(raw: string): Topic | undefined {
    const num = parseEntityId(raw);
    if (num == null) throw invalid('topic.id');
    const t = this.state.topics.get(num);
    return t && this.visible(t.createdWallMs) ? t : undefined;
  }

  /** Returns [status, body]. */
  route(method: string, url: URL): [number, string] {
    if (method !== 'GET' && method !== 'HEAD') throw new HttpError(405, 'Method not allowed');
    const parts = url.pathname.replace(/\/+$/, '').split('/').slice(1);
    if (parts[0] !== 'api' || parts[1] !== 'v1') throw notFound();
    const [resource, a, b, c] = parts.slice(2);
    const extra = parts.length > 6;
    if (extra) throw notFound();
    if (resource === 'topics' && a === 'messages' && b !== undefined && c === undefined)
      return this.messageByTimestamp(b, url);
    if (resource === 'topics' && a !== undefined && b === 'messages' && c === undefined)
      return this.topicMessages(a, url);
    if (resource === 'topics' && a !== undefined && b === 'messages' && c !== undefined)
      return this.messageBySeq(a, c, url);
    if (resource === 'topics' && a !== undefined && b === undefined) return this.topic(a, url);
    if (resource === 'accounts' && a !== undefined && b === undefined) return this.account(a, url);
    if (resource === 'transactions' && a !== undefined && b === undefined) return this.transaction(a, url);
    if (resource === 'network' && a === 'exchangerate' && b === undefined) return this.exchangeRate(url);
    throw notFound();
  }

  private topicMessages(id: string, url: URL): [number, string] {
    const q = parseQuery(url, ['encoding', 'limit', 'order', 'sequencenumber', 'timestamp']);
    const utf8 = parseUtf8(q);
    const limit = parseLimit(q);
    const order = parseOrder(q, 'asc');
    const seqFilters = values(q, 'sequencenumber').map((v) => parseFilter('sequencenumber', v));
    const tsFilters = values(q, 'timestamp').map((v) => parseFilter('timestamp', v));
    for (const f of seqFilters) if (!seqValue.safeParse(f.value).success) throw invalid('sequencenumber');
    const tsValues = tsFilters.map((f) => {
      const ns = parseTsString(f.value);
      if (ns === null) throw invalid('timestamp');
      return { op: f.op, ns };
    });
    const topic = this.topicOrNull(id);
    // The current mirror does not check that the topic exists here: unknown topics give an empty page.
    const msgs = topic?.messages ?? [];
    let lo = 0;
    let hi = visibleCount(msgs, this.deps.lagMs());
    for (const f of seqFilters) {
      const n = Number(f.value);
      if (f.op === 'eq' || f.op === 'gte') lo = Math.max(lo, n - 1);
      if (f.op === 'gt') lo = Math.max(lo, n);
      if (f.op === 'eq' || f.op === 'lte') hi = Math.min(hi, n);
      if (f.op === 'lt') hi = Math.min(hi, n - 1);
    }
    for (const f of tsValues) {
      if (f.op === 'eq' || f.op === 'gte') lo = Math.max(lo, firstIndexAtOrAfter(msgs, f.ns));
      if (f.op === 'gt') lo = Math.max(lo, firstIndexAfter(msgs, f.ns));
      if (f.op === 'eq' || f.op === 'lte') hi = Math.min(hi, firstIndexAfter(msgs, f.ns));
      if (f.op === 'lt') hi = Math.min(hi, firstIndexAtOrAfter(msgs, f.ns));
    }
    const page: TopicMessage[] = [];
    if (order === 'asc') for (let i = lo; i < hi && page.length < limit; i++) page.push(msgs[i] as TopicMessage);
    else for (let i = hi - 1; i >= lo && page.length < limit; i--) page.push(msgs[i] as TopicMessage);
    const tail = page.at(-1);
    const next = page.length === limit && tail ? nextLink(url.pathname, q, order, tsString(tail.ns)) : null;
    return [
      200,
      `{"messages":[${page.map((m) => messageJson(m, utf8)).join(',')}],"links":{"next":${JSON.stringify(next)}}}`,
    ];
  }

  private messageBySeq(id: string, seqRaw: string, url: URL): [number, string] {
    const q = parseQuery(url, ['encoding']);
    if (!seqValue.safeParse(seqRaw).success || Number(seqRaw) < 1) throw invalid('sequencenumber');
    const topic = this.topicOrNull(id);
    const m = topic?.messages[Number(seqRaw) - 1];
    if (!m || !this.visible(m.wallMs)) throw notFound();
    return [200, messageJson(m, parseUtf8(q))];
  }

  private messageByTimestamp(raw: string, url: URL): [number, string] {
    const q = parseQuery(url, ['encoding']);
    const ns = parseTsString(raw);
    if (ns === null) throw invalid('consensusTimestamp');
    for (const t of this.state.topics.values()) {
      const i = firstIndexAtOrAfter(t.messages, ns);
      const m = t.messages[i];
      if (m && m.ns === ns && this.visible(m.wallMs)) return [200, messageJson(m, parseUtf8(q))];
    }
    throw notFound();
  }

  private topic(id: string, url: URL): [number, string] {
    parseQuery(url, []);
    const t = this.topicOrNull(id);
    if (!t) throw notFound();
    const created = tsString(t.createdNs);
    return [
      200,
      stringify({
        admin_key: keyToMirror(t.adminKey),
        auto_renew_account: t.autoRenewAccount !== undefined ? entityId(t.autoRenewAccount) : null,
        auto_renew_period: t.autoRenewPeriod,
        created_timestamp: created,
        custom_fees: {
          created_timestamp: created,
          fixed_fees: t.customFees.map((f) => ({
            amount: f.amount,
            collector_account_id: entityId(f.collector),
            denominating_token_id: null,
          })),
        },
        deleted: t.deleted,
        fee_exempt_key_list: t.feeExemptKeys.map((k) => keyToMirror(k)),
        fee_schedule_key: keyToMirror(t.feeScheduleKey),
        memo: t.memo,
        submit_key: keyToMirror(t.submitKey),
        timestamp: { from: created, to: null },
        topic_id: entityId(t.num),
      }),
    ];
  }

  private findAccount(raw: string): Account | undefined {
    const evm = /^(?:0x)?([0-9a-fA-F]{40})$/.exec(raw);
    let num: number | null | undefined;
    if (evm) {
      const hex = (evm[1] ?? '').toLowerCase();
      num = this.state.aliases.get(hex);
      // A long-zero address names the account number directly.
      if (num === undefined && hex.startsWith('000000000000000000000000')) num = parseInt(hex.slice(24), 16);
    } else {
      num = parseEntityId(raw);
      if (num === null) throw invalid('idOrAliasOrEvmAddress');
    }
    const a = num === undefined ? undefined : this.state.accounts.get(num);
    return a && this.visible(a.createdWallMs) ? a : undefined;
  }

  private account(id: string, url: URL): [number, string] {
    parseQuery(url, ['limit', 'order', 'timestamp', 'transactiontype', 'transactions']);
    const a = this.findAccount(id);
    if (!a) throw notFound();
    const latest = tsString(this.state.lastConsensusNs);
    return [
      200,
      stringify({
        account: entityId(a.num),
        alias: null,
        auto_renew_period: a.autoRenewPeriod,
        balance: { balance: a.balance, timestamp: latest, tokens: [] },
        created_timestamp: tsString(a.createdNs),
        decline_reward: a.declineReward,
        deleted: a.deleted,
        ethereum_nonce: 0,
        evm_address: `0x${(a.evmAlias ?? longZeroAddress(a.num)).toString('hex')}`,
        expiry_timestamp: tsString(BigInt(a.expirySeconds) * NS_PER_S),
        key: keyToMirror(a.key),
        max_automatic_token_associations: a.maxAutoAssociations,
        memo: a.memo,
        pending_reward: 0,
        receiver_sig_required: a.receiverSigRequired,
        staked_account_id: null,
        staked_node_id: null,
        stake_period_start: null,
        // Account transaction history is not indexed by the emulator.
        transactions: [],
        links: { next: null },
      }),
    ];
  }

  private transaction(id: string, url: URL): [number, string] {
    parseQuery(url, ['nonce', 'scheduled']);
    let r: TxRecord | undefined;
    const txId = parseTxId(id);
    if (txId) r = this.state.records.get(txIdKey(txId));
    else if (/^(0x)?[0-9a-fA-F]{96}$/.test(id)) r = this.state.recordByHash.get(id.replace(/^0x/, '').toLowerCase());
    else if (/^[A-Za-z0-9+/_-]{64}$/.test(id))
      r = this.state.recordByHash.get(Buffer.from(id, 'base64').toString('hex'));
    else throw invalid('transactionIdOrHash');
    if (!r || !this.visible(r.wallMs)) throw notFound();
    return [
      200,
      stringify({
        transactions: [
          {
            assessed_custom_fees: [],
            batch_key: null,
            bytes: null,
            charged_tx_fee: r.fee,
            consensus_timestamp: tsString(r.ns),
            entity_id: r.entity ? entityId(r.entity.num) : null,
            max_custom_fees: [],
            max_fee: r.maxFee.toString(),
            memo_base64: Buffer.from(r.memo, 'utf8').toString('base64'),
            name: MIRROR_NAMES[r.type] ?? r.type.toUpperCase(),
            nft_transfers: [],
            node: entityId(r.node),
            nonce: r.txId.nonce,
            parent_consensus_timestamp: null,
            result: statusName(r.status),
            scheduled: r.txId.scheduled,
            staking_reward_transfers: [],
            token_transfers: [],
            transaction_hash: r.hash.toString('base64'),
            transaction_id: txIdMirror(r.txId),
            transfers: r.transfers.map((t) => ({ account: entityId(t.account), amount: t.amount, is_approval: false })),
            valid_duration_seconds: String(r.validDurationS),
            valid_start_timestamp: tsString(r.txId.validStartNs),
          },
        ],
      }),
    ];
  }

  private exchangeRate(url: URL): [number, string] {
    parseQuery(url, ['timestamp']);
    const nowS = Math.floor(Date.now() / 1000);
    const expiry = (Math.floor(nowS / 3600) + 1) * 3600;
    const rate = (expiration_time: number): unknown => ({
      cent_equivalent: EXCHANGE_RATE.centEquiv,
      expiration_time,
      hbar_equivalent: EXCHANGE_RATE.hbarEquiv,
    });
    return [
      200,
      JSON.stringify({ current_rate: rate(expiry), next_rate: rate(expiry + 3600), timestamp: `${nowS}.000000000` }),
    ];
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    let status: number;
    let body: string;
    try {
      [status, body] = this.route(req.method ?? 'GET', new URL(req.url ?? '/', 'http://localhost'));
    } catch (err) {
      status = err instanceof HttpError ? err.status : 500;
      const message = err instanceof HttpError ? err.message : 'Internal error';
      body = JSON.stringify({ _status: { messages: [{ message }] } });
    }
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      'access-control-allow-origin': '*',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  }
}

export function createMirrorRestServer(deps: MirrorRestDeps): Server {
  const rest = new MirrorRest(deps);
  const server = createServer((req, res) => rest.handle(req, res));
  server.keepAliveTimeout = 5_000;
  return server;
}
