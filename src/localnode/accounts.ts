/**
 * Crypto Service handlers: enough to fund and describe test accounts. CryptoCreate (key, initial balance, memo,
 * EVM alias), CryptoUpdate (memo, key, receiverSigRequired, auto-renew, expiry) signed by the account key (and the
 * new key), and HBAR-only CryptoTransfer. Token transfers, allowances and auto-creation by alias are not emulated.
 */
import { proto } from '@hashgraph/proto';
import { Status, accountNum, longToBigInt, longToNumber, tsFromProto, NS_PER_S } from './codec.js';
import type { TransactionHandler } from './context.js';
import { evmAddressOf, isSatisfied, isValidKey } from './keys.js';
import type { Account, LedgerState } from './state.js';
import { memoStatus } from './topics.js';

const MIN_ACCOUNT_RENEW_S = 2_592_000;
const MAX_ACCOUNT_RENEW_S = 8_000_001;
const MAX_TRANSFERS = 10;

/** Resolves a numeric id or a 20-byte EVM-address / key alias to an account number. */
export function resolveAccount(state: LedgerState, id: proto.IAccountID | null | undefined): number | null {
  if (!id) return null;
  if (id.alias?.length) {
    if (id.alias.length === 20) return state.aliases.get(Buffer.from(id.alias).toString('hex')) ?? null;
    try {
      const key = proto.Key.decode(id.alias);
      if (key.ECDSASecp256k1?.length === 33)
        return state.aliases.get(evmAddressOf(key.ECDSASecp256k1).toString('hex')) ?? null;
    } catch {
      return null;
    }
    return null;
  }
  return accountNum(id);
}

function renewStatus(seconds: number): number {
  return seconds < MIN_ACCOUNT_RENEW_S || seconds > MAX_ACCOUNT_RENEW_S
    ? Status.AUTORENEW_DURATION_NOT_IN_RANGE
    : Status.OK;
}

export const createAccount: TransactionHandler = {
  pureCheck(body) {
    const b = body.cryptoCreateAccount;
    if (!b?.key) return Status.KEY_REQUIRED;
    if (longToBigInt(b.initialBalance) < 0n) return Status.INVALID_INITIAL_BALANCE;
    if (!b.autoRenewPeriod) return Status.INVALID_RENEWAL_PERIOD;
    const r = renewStatus(longToNumber(b.autoRenewPeriod.seconds));
    if (r !== Status.OK) return r;
    if (b.alias?.length && b.alias.length !== 20) return Status.INVALID_ALIAS_KEY;
    return memoStatus(b.memo);
  },
  handle(ctx) {
    const b = ctx.tx.body.cryptoCreateAccount ?? {};
    const key = b.key;
    if (!key || !isValidKey(key)) return Status.BAD_ENCODING;
    const initial = longToBigInt(b.initialBalance);
    const payer = ctx.state.accounts.get(ctx.tx.txId.payer);
    if (!payer || payer.balance < initial) return Status.INSUFFICIENT_PAYER_BALANCE;
    if (b.receiverSigRequired && !isSatisfied(key, ctx.tx.sigs)) return Status.INVALID_SIGNATURE;
    let evmAlias: Buffer | undefined;
    if (b.alias?.length) {
      evmAlias = Buffer.from(b.alias);
      if (ctx.state.aliases.has(evmAlias.toString('hex'))) return Status.ALIAS_ALREADY_ASSIGNED;
      // The alias must be the key's own EVM address, proven by the key's signature.
      if (!key.ECDSASecp256k1?.length || !evmAddressOf(key.ECDSASecp256k1).equals(evmAlias))
        return Status.INVALID_ALIAS_KEY;
      if (!isSatisfied(key, ctx.tx.sigs)) return Status.INVALID_SIGNATURE;
    }
    const renew = longToNumber(b.autoRenewPeriod?.seconds);
    const account: Account = {
      num: ctx.state.allocateEntity(),
      key,
      balance: 0n,
      memo: b.memo ?? '',
      receiverSigRequired: b.receiverSigRequired === true,
      autoRenewPeriod: renew,
      expirySeconds: Number(ctx.ns / NS_PER_S) + renew,
      createdNs: ctx.ns,
      createdWallMs: ctx.wallMs,
      deleted: false,
      declineReward: b.declineReward === true,
      maxAutoAssociations: b.maxAutomaticTokenAssociations ?? 0,
      ...(evmAlias ? { evmAlias } : {}),
    };
    ctx.state.addAccount(account);
    ctx.changed.accounts.add(account.num);
    if (initial > 0n) ctx.move(ctx.tx.txId.payer, account.num, initial);
    ctx.result.entity = { kind: 'account', num: account.num };
    return Status.SUCCESS;
  },
};

export const updateAccount: TransactionHandler = {
  pureCheck(body) {
    const b = body.cryptoUpdateAccount;
    if (!b?.accountIDToUpdate) return Status.ACCOUNT_ID_DOES_NOT_EXIST;
    if (b.autoRenewPeriod) {
      const r = renewStatus(longToNumber(b.autoRenewPeriod.seconds));
      if (r !== Status.OK) return r;
    }
    return memoStatus(b.memo?.value);
  },
  handle(ctx) {
    const b = ctx.tx.body.cryptoUpdateAccount ?? {};
    const num = resolveAccount(ctx.state, b.accountIDToUpdate);
    const acct = num == null ? undefined : ctx.state.accounts.get(num);
    if (!acct) return Status.INVALID_ACCOUNT_ID;
    if (acct.deleted) return Status.ACCOUNT_DELETED;
    if (!isSatisfied(acct.key, ctx.tx.sigs)) return Status.INVALID_SIGNATURE;
    if (b.key) {
      if (!isValidKey(b.key)) return Status.BAD_ENCODING;
      if (!isSatisfied(b.key, ctx.tx.sigs)) return Status.INVALID_SIGNATURE;
    }
    let expiry = acct.expirySeconds;
    if (b.expirationTime) {
      expiry = Number(tsFromProto(b.expirationTime) / NS_PER_S);
      if (expiry < acct.expirySeconds) return Status.EXPIRATION_REDUCTION_NOT_ALLOWED;
    }
    if (b.key) acct.key = b.key;
    if (b.memo) acct.memo = b.memo.value ?? '';
    if (b.receiverSigRequiredWrapper) acct.receiverSigRequired = b.receiverSigRequiredWrapper.value === true;
    else if (b.receiverSigRequired != null && b.receiverSigRequired) acct.receiverSigRequired = true;
    if (b.autoRenewPeriod) acct.autoRenewPeriod = longToNumber(b.autoRenewPeriod.seconds);
    if (b.declineReward) acct.declineReward = b.declineReward.value === true;
    if (b.maxAutomaticTokenAssociations) acct.maxAutoAssociations = b.maxAutomaticTokenAssociations.value ?? 0;
    acct.expirySeconds = expiry;
    ctx.changed.accounts.add(acct.num);
    ctx.result.entity = { kind: 'account', num: acct.num };
    return Status.SUCCESS;
  },
};

export const cryptoTransfer: TransactionHandler = {
  pureCheck(body) {
    const b = body.cryptoTransfer;
    if ((b?.tokenTransfers?.length ?? 0) > 0) return Status.NOT_SUPPORTED;
    const amounts = b?.transfers?.accountAmounts ?? [];
    if (amounts.length > MAX_TRANSFERS) return Status.TRANSFER_LIST_SIZE_LIMIT_EXCEEDED;
    let sum = 0n;
    const seen = new Set<string>();
    for (const a of amounts) {
      if (a.isApproval) return Status.NOT_SUPPORTED;
      const id = a.accountID;
      const k = id?.alias?.length ? Buffer.from(id.alias).toString('hex') : String(accountNum(id));
      if (seen.has(k)) return Status.ACCOUNT_REPEATED_IN_ACCOUNT_AMOUNTS;
      seen.add(k);
      sum += longToBigInt(a.amount);
    }
    return sum === 0n ? Status.OK : Status.INVALID_ACCOUNT_AMOUNTS;
  },
  handle(ctx) {
    const moves: Array<{ acct: Account; amount: bigint }> = [];
    for (const a of ctx.tx.body.cryptoTransfer?.transfers?.accountAmounts ?? []) {
      const num = resolveAccount(ctx.state, a.accountID);
      const acct = num == null ? undefined : ctx.state.accounts.get(num);
      if (!acct) return Status.INVALID_ACCOUNT_ID;
      if (acct.deleted) return Status.ACCOUNT_DELETED;
      const amount = longToBigInt(a.amount);
      if ((amount < 0n || acct.receiverSigRequired) && !isSatisfied(acct.key, ctx.tx.sigs))
        return Status.INVALID_SIGNATURE;
      if (amount < 0n && acct.balance < -amount) return Status.INSUFFICIENT_ACCOUNT_BALANCE;
      moves.push({ acct, amount });
    }
    // Debits first into a virtual pool, then credits: the list sums to zero (pure check).
    const debits = moves.filter((m) => m.amount < 0n);
    const credits = moves.filter((m) => m.amount > 0n);
    for (const c of credits) {
      let need = c.amount;
      for (const d of debits) {
        if (need === 0n) break;
        // biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
        const take = -d.amount < need ? -d.amount : need;
        if (take === 0n) continue;
        ctx.move(d.acct.num, c.acct.num, take);
        d.amount += take;
        need -= take;
      }
    }
    return Status.SUCCESS;
  },
};
