/** Pure pieces: codec, running-hash bytes, key checks, genesis keys vs the SDK, fault matching, CLI fault specs. */
import { describe, expect, it } from 'vitest';
import { PrivateKey } from '@hashgraph/sdk';
import { proto } from '@hashgraph/proto';
import {
  parseEntityId,
  parseTsString,
  parseTxId,
  toLong,
  tsFromProto,
  tsString,
  tsToProto,
  txIdKey,
  longToBigInt,
} from '../../src/localnode/codec.js';
import { FaultPlan } from '../../src/localnode/faults.js';
import { genesisAccounts, OPERATOR_KEY_DER, OPERATOR_PUBLIC } from '../../src/localnode/genesis.js';
import { SignatureSet, isSatisfied, isValidKey } from '../../src/localnode/keys.js';
import { nextRunningHash, runningHashPreimage } from '../../src/localnode/running-hash.js';
import { firstIndexAfter, firstIndexAtOrAfter, visibleCount } from '../../src/localnode/topic-index.js';
import type { TopicMessage } from '../../src/localnode/state.js';
import { parseFaultSpec } from '../../src/cli/local-node.js';
import { specRunningHash } from './helpers.js';

describe('codec', () => {
  it('round-trips timestamps, ids and 64-bit values', () => {
    const ns = 1_795_254_521_436_000_001n;
    expect(tsFromProto(tsToProto(ns))).toBe(ns);
    expect(tsString(ns)).toBe('1795254521.436000001');
    expect(parseTsString('1795254521.436')).toBe(1_795_254_521_436_000_000n);
    expect(parseTsString('1795254521')).toBe(1_795_254_521_000_000_000n);
    expect(parseTsString('17.95.1')).toBeNull();
    expect(longToBigInt(toLong(-5n))).toBe(-5n);
    expect(longToBigInt(toLong(5_000_000_000_000_000_000n - 1n))).toBe(5_000_000_000_000_000_000n - 1n);
    expect(parseEntityId('0.0.1002')).toBe(1002);
    expect(parseEntityId('1002')).toBe(1002);
    expect(parseEntityId('1.0.1002')).toBeNull();
    const id = parseTxId('0.0.8-1234567890-000000006');
    expect(id && txIdKey(id)).toBe('0.0.8@1234567890.000000006');
    expect(parseTxId('0.0.8@1234567890.6')).toEqual(id);
  });
});

describe('running hash v3', () => {
  it('hashes the 211-byte Java serialization stream of the spec', () => {
    const input = {
      previous: Buffer.alloc(48, 7),
      payer: { shard: 0, realm: 0, num: 1001 },
      topic: { shard: 0, realm: 0, num: 1002 },
      consensusSeconds: 1795254521n,
      consensusNanos: 426000000,
      sequenceNumber: 9,
      message: Buffer.from('a'),
    };
    const pre = runningHashPreimage(input);
    expect(pre).toHaveLength(211);
    expect(pre.subarray(0, 4).toString('hex')).toBe('aced0005');
    expect(pre.subarray(75, 77).toString('hex')).toBe('774c');
    expect(pre.subarray(153, 163).toString('hex')).toBe('7571007e000000000030');
    expect(nextRunningHash(input).toString('hex')).toBe(
      specRunningHash(input.previous, 1001, 1002, 1795254521n, 426000000, 9, input.message).toString('hex'),
    );
  });
});

describe('keys and signatures', () => {
  const body = Buffer.from('transaction body bytes');
  const sigs = (signers: PrivateKey[]): SignatureSet =>
    new SignatureSet(
      body,
      signers.map((k) =>
        k.type === 'ED25519'
          ? { pubKeyPrefix: k.publicKey.toBytesRaw(), ed25519: k.sign(body) }
          : { pubKeyPrefix: k.publicKey.toBytesRaw(), ECDSASecp256k1: k.sign(body) },
      ),
    );
  const ed = PrivateKey.generateED25519();
  const ec = PrivateKey.generateECDSA();
  const other = PrivateKey.generateED25519();

  it('verifies SDK ED25519 and ECDSA(keccak256) signatures', () => {
    expect(isSatisfied({ ed25519: ed.publicKey.toBytesRaw() }, sigs([ed]))).toBe(true);
    expect(isSatisfied({ ECDSASecp256k1: ec.publicKey.toBytesRaw() }, sigs([ec]))).toBe(true);
    expect(isSatisfied({ ed25519: ed.publicKey.toBytesRaw() }, sigs([other]))).toBe(false);
    const forged = new SignatureSet(body, [{ pubKeyPrefix: ed.publicKey.toBytesRaw(), ed25519: other.sign(body) }]);
    expect(isSatisfied({ ed25519: ed.publicKey.toBytesRaw() }, forged)).toBe(false);
  });

  it('evaluates KeyList and ThresholdKey', () => {
    const t: proto.IKey = {
      thresholdKey: {
        threshold: 2,
        keys: {
          keys: [
            { ed25519: ed.publicKey.toBytesRaw() },
            { ECDSASecp256k1: ec.publicKey.toBytesRaw() },
            { ed25519: other.publicKey.toBytesRaw() },
          ],
        },
      },
    };
    expect(isSatisfied(t, sigs([ed, ec]))).toBe(true);
    expect(isSatisfied(t, sigs([other]))).toBe(false);
    const all: proto.IKey = {
      keyList: { keys: [{ ed25519: ed.publicKey.toBytesRaw() }, { ECDSASecp256k1: ec.publicKey.toBytesRaw() }] },
    };
    expect(isSatisfied(all, sigs([ed, ec]))).toBe(true);
    expect(isSatisfied(all, sigs([ed]))).toBe(false);
    expect(isSatisfied({ keyList: { keys: [] } }, sigs([ed]))).toBe(false);
    expect(isValidKey({ ECDSASecp256k1: Buffer.alloc(33, 1) })).toBe(false);
    expect(isValidKey({ thresholdKey: { threshold: 3, keys: { keys: [{ ed25519: Buffer.alloc(32) }] } } })).toBe(false);
  });
});

describe('genesis', () => {
  it('uses the published operator key and derives the same public keys and EVM addresses as the SDK', () => {
    const op = PrivateKey.fromStringDer(OPERATOR_KEY_DER);
    expect(Buffer.from(op.publicKey.toBytesRaw()).toString('hex')).toBe(OPERATOR_PUBLIC.toString('hex'));
    expect(OPERATOR_PUBLIC.toString('hex')).toBe('0aa8e21064c61eab86e2a9c164565b4e7a9a4146106e0a6cd03a8c395a110e92');
    const accounts = genesisAccounts(11).map((a) => a.info);
    expect(accounts.map((a) => a.accountId).slice(0, 3)).toEqual(['0.0.1002', '0.0.1003', '0.0.1004']);
    expect(accounts.find((a) => a.accountId === '0.0.1013')?.evmAddress).toBe(
      '0x67d8d32e9bf1a9968a5ff53b87d777aa8ebbee69',
    );
    for (const a of accounts) {
      const k = PrivateKey.fromStringDer(a.privateKey);
      expect(k.publicKey.toStringDer()).toBe(a.publicKey);
      if (a.evmAddress) expect(`0x${k.publicKey.toEvmAddress()}`).toBe(a.evmAddress);
    }
    expect(new Set(accounts.map((a) => a.privateKey)).size).toBe(33);
  });
});

describe('topic index', () => {
  const msgs = [10n, 20n, 30n].map((ns, i) => ({ ns, wallMs: 1000 * (i + 1), seq: i + 1 }) as TopicMessage);
  it('binary-searches consensus time and mirror visibility', () => {
    expect(firstIndexAtOrAfter(msgs, 20n)).toBe(1);
    expect(firstIndexAfter(msgs, 20n)).toBe(2);
    expect(firstIndexAtOrAfter(msgs, 31n)).toBe(3);
    expect(visibleCount(msgs, 500, 2600)).toBe(2);
    expect(visibleCount(msgs, 0)).toBe(3);
  });
});

describe('faults', () => {
  it('matches by method, Service/method, path or *, and counts down', () => {
    const f = new FaultPlan();
    f.injectPrecheck('submitMessage', 'BUSY', 2);
    f.injectGrpcError('CryptoService/getTransactionReceipts', 14);
    expect(f.take('/proto.CryptoService/cryptoGetBalance')).toBeUndefined();
    expect(f.take('/proto.ConsensusService/submitMessage')).toEqual({
      kind: 'precheck',
      status: proto.ResponseCodeEnum.BUSY,
    });
    expect(f.take('/proto.CryptoService/getTransactionReceipts', ['precheck'])).toBeUndefined();
    expect(f.take('/proto.CryptoService/getTransactionReceipts')).toEqual({ kind: 'grpc', code: 14 });
    expect(f.take('/proto.ConsensusService/submitMessage')).toBeDefined();
    expect(f.take('/proto.ConsensusService/submitMessage')).toBeUndefined();
    f.injectPrecheck('*', 'PLATFORM_NOT_ACTIVE', Number.POSITIVE_INFINITY);
    for (let i = 0; i < 5; i++)
      expect(f.take('/com.hedera.mirror.api.proto.ConsensusService/subscribeTopic')?.kind).toBe('precheck');
    f.clear();
    expect(f.take('/proto.ConsensusService/submitMessage')).toBeUndefined();
  });

  it('parses CLI fault specs', () => {
    expect(parseFaultSpec('busy:3')).toEqual({ kind: 'precheck', status: 'BUSY', method: '*', count: 3 });
    expect(parseFaultSpec('not-created@submitMessage:1')).toEqual({
      kind: 'precheck',
      status: 'PLATFORM_TRANSACTION_NOT_CREATED',
      method: 'submitMessage',
      count: 1,
    });
    expect(parseFaultSpec('unavailable:always')).toEqual({
      kind: 'grpc',
      code: 14,
      method: '*',
      count: Number.POSITIVE_INFINITY,
    });
    expect(parseFaultSpec('PLATFORM_NOT_ACTIVE:2')).toMatchObject({ kind: 'precheck', status: 'PLATFORM_NOT_ACTIVE' });
    expect(parseFaultSpec('drop:5000')).toEqual({ kind: 'drop', everyMs: 5000 });
    expect(() => parseFaultSpec('drop:5')).toThrow(/at least 100 ms/);
    expect(() => parseFaultSpec('sometimes:1')).toThrow(/not a fault spec/);
    expect(() => parseFaultSpec('busy')).toThrow(/not a fault spec/);
  });
});

describe('mirror subscriptions', () => {
  it('sleeps at most 2^31−1 ms towards a far end time instead of Node’s 1 ms overflow fallback', async () => {
    const { com } = await import('@hashgraph/proto');
    const { vi } = await import('vitest');
    const { EventEmitter } = await import('node:events');
    const { LedgerState } = await import('../../src/localnode/state.js');
    const { TopicStreams } = await import('../../src/localnode/mirror-grpc.js');
    const state = new LedgerState();
    state.addTopic({
      num: 1001,
      memo: '',
      feeExemptKeys: [],
      customFees: [],
      autoRenewPeriod: 7_776_000,
      expirySeconds: 0,
      createdNs: 1n,
      createdWallMs: 0,
      deleted: false,
      sequenceNumber: 0,
      runningHash: Buffer.alloc(48),
      messages: [],
    });
    const request = Buffer.from(
      com.hedera.mirror.api.proto.ConsensusTopicQuery.encode({
        topicID: { topicNum: toLong(1001) },
        consensusStartTime: { seconds: toLong(0) },
        consensusEndTime: { seconds: toLong(4_000_000_000) },
      }).finish(),
    );
    const call = Object.assign(new EventEmitter(), { request, write: () => true, end: () => undefined });
    call.on('error', () => undefined);
    const spy = vi.spyOn(globalThis, 'setTimeout');
    const streams = new TopicStreams(state, { lagMs: () => 0 });
    try {
      streams.open(call as never);
      const delays = spy.mock.calls.map((c) => Number(c[1]));
      expect(delays.length).toBe(1);
      expect(delays[0]).toBe(2 ** 31 - 1);
    } finally {
      spy.mockRestore();
      streams.closeAll();
    }
  });
});
