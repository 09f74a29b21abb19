/**
 * Flat fees. The real network prices each transaction from a fee schedule (USD) and the exchange-rate file, and
 * the price also depends on signature count and size; here each kind has one USD price converted at the local
 * node's genesis rate (1 ℏ = 12 ¢). Callers must never assert exact fees, only that they are charged and bounded.
 */
export const EXCHANGE_RATE = { hbarEquiv: 1, centEquiv: 12 } as const;
export const TINYBARS_PER_HBAR = 100_000_000n;

const USD_PRICES: Record<string, number> = {
  consensusCreateTopic: 0.01,
  consensusUpdateTopic: 0.00022,
  consensusDeleteTopic: 0.005,
  consensusSubmitMessage: 0.0001,
  cryptoCreateAccount: 0.05,
  cryptoUpdateAccount: 0.00022,
  cryptoTransfer: 0.0001,
};

const QUERY_USD_PRICES: Record<string, number> = {
  consensusGetTopicInfo: 0.0001,
  transactionGetRecord: 0.0001,
  cryptoGetInfo: 0.0001,
};

/** Share of every fee that goes to the node account; the rest goes to the funding account 0.0.98. */
export const NODE_FEE_SHARE = 20n;

function usdToTinybars(usd: number): bigint {
  return BigInt(Math.round((usd * 100 * EXCHANGE_RATE.hbarEquiv * 1e8) / EXCHANGE_RATE.centEquiv));
}

export function transactionFee(kind: string): bigint {
  return usdToTinybars(USD_PRICES[kind] ?? 0.001);
}

/** Cost of a paid query; 0 for free ones (receipts, balances). */
export function queryCost(kind: string): bigint {
  const usd = QUERY_USD_PRICES[kind];
  return usd === undefined ? 0n : usdToTinybars(usd);
}

export function splitFee(fee: bigint): { node: bigint; funding: bigint } {
  const node = fee / NODE_FEE_SHARE;
  return { node, funding: fee - node };
}
