/**
 * Genesis like hiero-local-node: operator 0.0.2 with the published local-node key, node account 0.0.3, fee and
 * reward accounts, and pre-funded accounts with the published local-node test keys — ECDSA (0.0.1002…),
 * alias ECDSA with their EVM address as alias (0.0.1012…), and ED25519 (0.0.1022…) for the default of 10 each.
 * These keys are public test keys: never use them on a real network.
 */
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import {
  ECDSA_PKCS8_PREFIX,
  ECDSA_SPKI_PREFIX,
  ED25519_PKCS8_PREFIX,
  ED25519_SPKI_PREFIX,
  evmAddressOf,
} from './keys.js';
import { TINYBARS_PER_HBAR } from './fees.js';
import type { Account, LedgerState } from './state.js';

export const OPERATOR_ACCOUNT = 2;
/** hiero-local-node's published operator key (DER/PKCS#8 ED25519). */
export const OPERATOR_KEY_DER =
  '302e020100300506032b65700422042091132178e72057a1d7528025956fe39b0b847f200ab59b2fdd367017f3087137';
export const FIRST_FUNDED_ACCOUNT = 1002;
export const DEFAULT_ACCOUNTS = 10;
export const DEFAULT_BALANCE_HBAR = 10_000;
const GENESIS_SUPPLY_HBAR = 50_000_000_000n;
const SYSTEM_ACCOUNTS = [98, 800, 801] as const;
export const FIRST_NODE_ACCOUNT = 3;
/** Mainnet has about thirty consensus nodes; node accounts must stay below the fee collection account 0.0.98. */
export const MAX_NODES = 32;
const RENEW_S = 7_776_000;

// hiero-local-node src/configuration/accountConfiguration.json (raw 32-byte private keys).
const ECDSA_KEYS = [
  '7f109a9e3b0d8ecfba9cc23a3614433ce0fa7ddcc80f2a8f10b222179a5a80d6',
  '6ec1f2e7d126a74a1d2ff9e1c5d90b92378c725e506651ff8bb8616a5c724628',
  'b4d7f7e82f61d81c95985771b8abf518f9328d019c36849d4214b5f995d13814',
  '941536648ac10d5734973e94df413c17809d6cc5e24cd11e947e685acfbd12ae',
  '5829cf333ef66b6bdd34950f096cb24e06ef041c5f63e577b4f3362309125863',
  '8fc4bffe2b40b2b7db7fd937736c4575a0925511d7a0a2dfc3274e8c17b41d20',
  'b6c10e2baaeba1fa4a8b73644db4f28f4bf0912cceb6e8959f73bb423c33bd84',
  'fe8875acb38f684b2025d5472445b8e4745705a9e7adc9b0485a05df790df700',
  'bdc6e0a69f2921a78e9af930111334a41d3fab44653c8de0775572c526feea2d',
  '3e215c3d2a59626a669ed04ec1700f36c05c9b216e592f58bbfd3d8aa6ea25f9',
];
const ALIAS_ECDSA_KEYS = [
  '105d050185ccb907fba04dd92d8de9e32c18305e097ab41dadda21489a211524',
  '2e1d968b041d84dd120a5860cee60cd83f9374ef527ca86996317ada3d0d03e7',
  '45a5a7108a18dd5013cf2d5857a28144beadc9c70b3bdbd914e38df4e804b8d8',
  '6e9d61a325be3f6675cf8b7676c70e4a004d2308e3e182370a41f5653d52c6bd',
  '0b58b1bd44469ac9f813b5aeaf6213ddaea26720f0b2f133d08b6f234130a64f',
  '95eac372e0f0df3b43740fa780e62458b2d2cc32d6a440877f1cc2a9ad0c35cc',
  '6c6e6727b40c8d4b616ab0d26af357af09337299f09c66704146e14236972106',
  '5072e7aa1b03f531b4731a32a021f6a5d20d5ddc4e55acbb71ae202fc6f3a26d',
  '60fe891f13824a2c1da20fb6a14e28fa353421191069ba6b6d09dd6c29b90eff',
  'eae4e00ece872dd14fb6dc7a04f390563c7d69d16326f2a703ec8e0934060cc7',
];
const ED25519_KEYS = [
  'a608e2130a0a3cb34f86e757303c862bee353d9ab77ba4387ec084f881d420d4',
  'bbd0894de0b4ecfa862e963825c5448d2d17f807a16869526bff29185747acdb',
  '8fd50f886a2e7ed499e7686efd1436b50aa9b64b26e4ecc4e58ca26e6257b67d',
  '62c966ebd9dcc0fc16a553b2ef5b72d1dca05cdf5a181027e761171e9e947420',
  '805c9f422fd9a768fdd8c68f4fe0c3d4a93af714ed147ab6aed5f0ee8e9ee165',
  'abfdb8bf0b46c0da5da8d764316f27f185af32357689f7e19cb9ec3e0f590775',
  'ec299c9f17bb8bdd5f3a21f1c2bffb3ac86c22e84c325e92139813639c9c3507',
  'cb833706d1df537f59c418a00e36159f67ce3760ce6bf661f11f6da2b11c2c5a',
  '9b6adacefbbecff03e4359098d084a3af8039ce7f29d95ed28c7ebdb83740c83',
  '9a07bbdbb62e24686d2a4259dc88e38438e2c7a1ba167b147ad30ac540b0a3cd',
];

export interface GenesisAccount {
  accountId: string;
  privateKey: string; // DER hex
  publicKey: string; // DER hex
  type: 'ED25519' | 'ECDSA';
  evmAddress?: string;
  balanceHbar: number;
}

/** Beyond the 10 published keys, more are derived deterministically so every run has the same accounts. */
function rawKey(list: readonly string[], kind: string, i: number): Buffer {
  const known = list[i];
  if (known) return Buffer.from(known, 'hex');
  for (let salt = 0; ; salt++) {
    const k = createHash('sha256').update(`hcs25-localnode:${kind}:${i}:${salt}`).digest();
    if (kind === 'ed25519' || secp256k1.utils.isValidSecretKey(k)) return k;
  }
}

export function ed25519Public(seed: Buffer): Buffer {
  const priv = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, seed]), format: 'der', type: 'pkcs8' });
  return Buffer.from(createPublicKey(priv).export({ format: 'der', type: 'spki' })).subarray(
    ED25519_SPKI_PREFIX.length,
  );
}

export const OPERATOR_PUBLIC = ed25519Public(
  Buffer.from(OPERATOR_KEY_DER.slice(ED25519_PKCS8_PREFIX.length * 2), 'hex'),
);

function describe(
  num: number,
  type: 'ED25519' | 'ECDSA',
  raw: Buffer,
  alias: boolean,
  balanceHbar: number,
): { info: GenesisAccount; publicRaw: Buffer; evm?: Buffer } {
  if (type === 'ED25519') {
    const pub = ed25519Public(raw);
    return {
      info: {
        accountId: `0.0.${num}`,
        privateKey: Buffer.concat([ED25519_PKCS8_PREFIX, raw]).toString('hex'),
        publicKey: Buffer.concat([ED25519_SPKI_PREFIX, pub]).toString('hex'),
        type,
        balanceHbar,
      },
      publicRaw: pub,
    };
  }
  const pub = Buffer.from(secp256k1.getPublicKey(raw, true));
  const evm = evmAddressOf(pub);
  return {
    info: {
      accountId: `0.0.${num}`,
      privateKey: Buffer.concat([ECDSA_PKCS8_PREFIX, raw]).toString('hex'),
      publicKey: Buffer.concat([ECDSA_SPKI_PREFIX, pub]).toString('hex'),
      type,
      ...(alias ? { evmAddress: `0x${evm.toString('hex')}` } : {}),
      balanceHbar,
    },
    publicRaw: pub,
    ...(alias ? { evm } : {}),
  };
}

/** The pre-funded accounts for `n` of each kind, in creation order (no ledger needed: ids are fixed). */
export function genesisAccounts(
  n = DEFAULT_ACCOUNTS,
  balanceHbar = DEFAULT_BALANCE_HBAR,
): Array<ReturnType<typeof describe>> {
  const out: Array<ReturnType<typeof describe>> = [];
  let num = FIRST_FUNDED_ACCOUNT;
  for (let i = 0; i < n; i++) out.push(describe(num++, 'ECDSA', rawKey(ECDSA_KEYS, 'ecdsa', i), false, balanceHbar));
  for (let i = 0; i < n; i++)
    out.push(describe(num++, 'ECDSA', rawKey(ALIAS_ECDSA_KEYS, 'alias-ecdsa', i), true, balanceHbar));
  for (let i = 0; i < n; i++)
    out.push(describe(num++, 'ED25519', rawKey(ED25519_KEYS, 'ed25519', i), false, balanceHbar));
  return out;
}

/** Writes genesis into an empty ledger, with node accounts 0.0.3 … 0.0.(2+nodes); consensus time of genesis is `ns`. */
export function applyGenesis(
  state: LedgerState,
  accounts: ReturnType<typeof genesisAccounts>,
  ns: bigint,
  nodes = 1,
): void {
  const base = (num: number, key: Account['key'], balance: bigint): Account => ({
    num,
    key,
    balance,
    memo: '',
    receiverSigRequired: false,
    autoRenewPeriod: RENEW_S,
    expirySeconds: Number(ns / 1_000_000_000n) + RENEW_S,
    createdNs: ns,
    createdWallMs: 0,
    deleted: false,
    declineReward: false,
    maxAutoAssociations: 0,
  });
  const genesisKey = { ed25519: OPERATOR_PUBLIC };
  let funded = 0n;
  for (const a of accounts) {
    const balance = BigInt(a.info.balanceHbar) * TINYBARS_PER_HBAR;
    funded += balance;
    const key = a.info.type === 'ED25519' ? { ed25519: a.publicRaw } : { ECDSASecp256k1: a.publicRaw };
    state.addAccount({
      ...base(Number(a.info.accountId.slice(4)), key, balance),
      ...(a.evm ? { evmAlias: a.evm } : {}),
    });
  }
  for (let i = 0; i < nodes; i++) state.addAccount(base(FIRST_NODE_ACCOUNT + i, genesisKey, 0n));
  for (const num of SYSTEM_ACCOUNTS) state.addAccount(base(num, genesisKey, 0n));
  state.addAccount(base(OPERATOR_ACCOUNT, genesisKey, GENESIS_SUPPLY_HBAR * TINYBARS_PER_HBAR - funded));
  state.nextEntity = Math.max(state.nextEntity, FIRST_FUNDED_ACCOUNT + accounts.length);
  state.lastConsensusNs = ns;
}
