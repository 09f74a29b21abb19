/**
 * Optional persistence (`stateDir`): an append-only JSON-lines journal. Genesis is one line (it is deterministic);
 * then entity snapshots when an account or topic is created or changed, each topic message, and each record.
 * Balances are not snapshotted: replaying the records' transfer lists rebuilds them. Lines are batched per tick.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import type { proto } from '@hashgraph/proto';
import { txIdKey } from './codec.js';
import type { LedgerListener } from './ledger.js';
import { keyBytes, keyFromBytes } from './keys.js';
import type { Account, LedgerState, Topic, TopicMessage, TxRecord } from './state.js';
import { LocalNodeError } from './errors.js';
import { FIRST_NODE_ACCOUNT } from './genesis.js';

const FILE = 'ledger.jsonl';

type Line =
  | { k: 'genesis'; accounts: number; ns: string; nodes?: number }
  | {
      k: 'acct';
      num: number;
      key: string;
      memo: string;
      rsr: boolean;
      renew: number;
      exp: number;
      ns: string;
      del: boolean;
      dr: boolean;
      maa: number;
      alias?: string;
    }
  | {
      k: 'topic';
      num: number;
      memo: string;
      admin?: string;
      submit?: string;
      fsk?: string;
      fek: string[];
      fees: Array<[string, number]>;
      renew: number;
      ara?: number;
      exp: number;
      ns: string;
      del: boolean;
    }
  | {
      k: 'msg';
      t: number;
      s: number;
      ns: string;
      m: string;
      rh: string;
      p: number;
      ci?: [number, string, number, number];
    }
  | {
      k: 'rec';
      p: number;
      vs: string;
      type: string;
      st: number;
      ns: string;
      h: string;
      memo: string;
      fee: string;
      max: string;
      vd: number;
      tr: Array<[number, string]>;
      e?: [string, number];
      seq?: number;
      n?: number;
    };

const hex = (k: proto.IKey | undefined): string | undefined => (k ? keyBytes(k).toString('hex') : undefined);
const unhex = (s: string | undefined): proto.IKey | undefined => (s ? keyFromBytes(Buffer.from(s, 'hex')) : undefined);

function accountLine(a: Account): Line {
  return {
    k: 'acct',
    num: a.num,
    key: keyBytes(a.key).toString('hex'),
    memo: a.memo,
    rsr: a.receiverSigRequired,
    renew: a.autoRenewPeriod,
    exp: a.expirySeconds,
    ns: a.createdNs.toString(),
    del: a.deleted,
    dr: a.declineReward,
    maa: a.maxAutoAssociations,
    ...(a.evmAlias ? { alias: a.evmAlias.toString('hex') } : {}),
  };
}

function topicLine(t: Topic): Line {
  return {
    k: 'topic',
    num: t.num,
    memo: t.memo,
    admin: hex(t.adminKey),
    submit: hex(t.submitKey),
    fsk: hex(t.feeScheduleKey),
    fek: t.feeExemptKeys.map((k) => keyBytes(k).toString('hex')),
    fees: t.customFees.map((f) => [f.amount.toString(), f.collector]),
    renew: t.autoRenewPeriod,
    ara: t.autoRenewAccount,
    exp: t.expirySeconds,
    ns: t.createdNs.toString(),
    del: t.deleted,
  };
}

function messageLine(m: TopicMessage): Line {
  return {
    k: 'msg',
    t: m.topic,
    s: m.seq,
    ns: m.ns.toString(),
    m: m.message.toString('base64'),
    rh: m.runningHash.toString('base64'),
    p: m.payer,
    ...(m.chunk
      ? {
          ci: [
            m.chunk.initialTxId.payer,
            m.chunk.initialTxId.validStartNs.toString(),
            m.chunk.number,
            m.chunk.total,
          ] as [number, string, number, number],
        }
      : {}),
  };
}

function recordLine(r: TxRecord): Line {
  return {
    k: 'rec',
    p: r.txId.payer,
    vs: r.txId.validStartNs.toString(),
    type: r.type,
    st: r.status,
    ns: r.ns.toString(),
    h: r.hash.toString('base64'),
    memo: r.memo,
    fee: r.fee.toString(),
    max: r.maxFee.toString(),
    vd: r.validDurationS,
    tr: r.transfers.map((t) => [t.account, t.amount.toString()]),
    ...(r.entity ? { e: [r.entity.kind, r.entity.num] as [string, number] } : {}),
    ...(r.topicSeq !== undefined ? { seq: r.topicSeq } : {}),
    ...(r.node !== FIRST_NODE_ACCOUNT ? { n: r.node } : {}),
  };
}

export class Journal implements LedgerListener {
  private buffer: string[] = [];
  private scheduled = false;
  readonly file: string;

  constructor(
    dir: string,
    private readonly state: LedgerState,
  ) {
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new LocalNodeError('STATE_DIR', `cannot create state directory ${dir}`, {
        hint: 'choose a writable --state-dir',
        cause: err,
      });
    }
    this.file = join(dir, FILE);
  }

  exists(): boolean {
    return existsSync(this.file);
  }

  writeGenesis(accounts: number, ns: bigint, nodes = 1): void {
    this.push({ k: 'genesis', accounts, ns: ns.toString(), ...(nodes > 1 ? { nodes } : {}) });
    this.flush();
  }

  onConsensus(
    record: TxRecord,
    changed: { accounts: Set<number>; topics: Set<number>; messages: TopicMessage[] },
  ): void {
    for (const a of changed.accounts) {
      const acct = this.state.accounts.get(a);
      if (acct) this.push(accountLine(acct));
    }
    for (const t of changed.topics) {
      const topic = this.state.topics.get(t);
      if (topic) this.push(topicLine(topic));
    }
    for (const m of changed.messages) this.push(messageLine(m));
    this.push(recordLine(record));
  }

  private push(line: Line): void {
    this.buffer.push(JSON.stringify(line));
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  flush(): void {
    this.scheduled = false;
    if (this.buffer.length === 0) return;
    const text = `${this.buffer.join('\n')}\n`;
    this.buffer = [];
    appendFileSync(this.file, text);
  }

  /**
   * Replays the journal into `state` after running genesis through `genesis(accounts, ns, nodes)`.
   * Returns the number of pre-funded accounts of each kind recorded at genesis.
   */
  load(genesis: (accounts: number, ns: bigint, nodes: number) => void): number {
    const state = this.state;
    const lines = readFileSync(this.file, 'utf8').split('\n');
    let accounts = -1;
    let offset = 0;
    for (const [i, text] of lines.entries()) {
      const start = offset;
      offset += Buffer.byteLength(text, 'utf8') + 1;
      if (!text.trim()) continue;
      let line: Line;
      try {
        line = JSON.parse(text) as Line;
      } catch (err) {
        // A torn last line after a crash is expected; anything earlier is corruption. Cut it off, or the next
        // append would glue a good line onto it and corrupt the journal for the restart after this one.
        if (i >= lines.length - 2) {
          truncateSync(this.file, start);
          break;
        }
        throw new LocalNodeError('STATE_CORRUPT', `${this.file} line ${i + 1} is not valid JSON`, {
          hint: 'remove the state directory to start a fresh ledger',
          cause: err,
        });
      }
      if (line.k === 'genesis') {
        accounts = line.accounts;
        genesis(accounts, BigInt(line.ns), line.nodes ?? 1);
      } else if (accounts < 0) {
        throw new LocalNodeError('STATE_CORRUPT', `${this.file} does not start with a genesis line`, {
          hint: 'remove the state directory to start a fresh ledger',
        });
      } else replay(state, line);
    }
    if (accounts < 0)
      throw new LocalNodeError('STATE_CORRUPT', `${this.file} is empty`, {
        hint: 'remove the state directory to start a fresh ledger',
      });
    return accounts;
  }
}

/** The running hash after message `seq` (its line comes before the record's), for the receipt. */
function topicHashAt(state: LedgerState, entity: [string, number] | undefined, seq: number): Buffer | undefined {
  return entity?.[0] === 'topic' ? state.topics.get(entity[1])?.messages[seq - 1]?.runningHash : undefined;
}

function replay(state: LedgerState, line: Line): void {
  switch (line.k) {
    case 'acct': {
      const prev = state.accounts.get(line.num);
      state.addAccount({
        num: line.num,
        key: keyFromBytes(Buffer.from(line.key, 'hex')),
        balance: prev?.balance ?? 0n,
        memo: line.memo,
        receiverSigRequired: line.rsr,
        autoRenewPeriod: line.renew,
        expirySeconds: line.exp,
        createdNs: BigInt(line.ns),
        createdWallMs: 0,
        deleted: line.del,
        declineReward: line.dr,
        maxAutoAssociations: line.maa,
        ...(line.alias ? { evmAlias: Buffer.from(line.alias, 'hex') } : {}),
      });
      return;
    }
    case 'topic': {
      const prev = state.topics.get(line.num);
      state.addTopic({
        num: line.num,
        memo: line.memo,
        adminKey: unhex(line.admin),
        submitKey: unhex(line.submit),
        feeScheduleKey: unhex(line.fsk),
        feeExemptKeys: line.fek.map((k) => keyFromBytes(Buffer.from(k, 'hex'))),
        customFees: line.fees.map(([a, c]) => ({ amount: BigInt(a), collector: c })),
        autoRenewPeriod: line.renew,
        autoRenewAccount: line.ara,
        expirySeconds: line.exp,
        createdNs: BigInt(line.ns),
        createdWallMs: 0,
        deleted: line.del,
        sequenceNumber: prev?.sequenceNumber ?? 0,
        runningHash: prev?.runningHash ?? Buffer.alloc(48),
        messages: prev?.messages ?? [],
      });
      return;
    }
    case 'msg': {
      const t = state.topics.get(line.t);
      if (!t) return;
      const m: TopicMessage = {
        topic: line.t,
        seq: line.s,
        ns: BigInt(line.ns),
        wallMs: 0,
        message: Buffer.from(line.m, 'base64'),
        runningHash: Buffer.from(line.rh, 'base64'),
        payer: line.p,
        chunk: line.ci
          ? {
              initialTxId: { payer: line.ci[0], validStartNs: BigInt(line.ci[1]), scheduled: false, nonce: 0 },
              number: line.ci[2],
              total: line.ci[3],
            }
          : null,
      };
      t.messages.push(m);
      t.sequenceNumber = m.seq;
      t.runningHash = m.runningHash;
      return;
    }
    case 'rec': {
      const txId = { payer: line.p, validStartNs: BigInt(line.vs), scheduled: false, nonce: 0 };
      const transfers = line.tr.map(([account, amount]) => ({ account, amount: BigInt(amount) }));
      for (const t of transfers) {
        const a = state.accounts.get(t.account);
        if (a) a.balance += t.amount;
      }
      state.addRecord({
        txId,
        key: txIdKey(txId),
        type: line.type,
        status: line.st,
        ns: BigInt(line.ns),
        wallMs: 0,
        hash: Buffer.from(line.h, 'base64'),
        memo: line.memo,
        fee: BigInt(line.fee),
        maxFee: BigInt(line.max),
        validDurationS: line.vd,
        node: line.n ?? FIRST_NODE_ACCOUNT,
        transfers,
        ...(line.e ? { entity: { kind: line.e[0] as 'account' | 'topic', num: line.e[1] } } : {}),
        ...(line.seq !== undefined
          ? { topicSeq: line.seq, topicRunningHash: topicHashAt(state, line.e, line.seq) }
          : {}),
      });
      return;
    }
    default:
      return;
  }
}
