/**
 * The HAPI gRPC surface, enumerated from the static service classes of `@hashgraph/proto` (the same list the
 * SDK-bundled proto has) instead of a hand-written list, so every method the SDK can call gets an answer:
 * implemented ones go to the ledger, the rest answer NOT_SUPPORTED.
 */
import { proto } from '@hashgraph/proto';

export interface HapiMethod {
  service: string;
  method: string;
  /** `/proto.ConsensusService/submitMessage` */
  path: string;
  kind: 'transaction' | 'query';
}

type RpcCall = (method: unknown, requestCtor: unknown, responseCtor: unknown) => void;

let cached: HapiMethod[] | undefined;

export function hapiMethods(): HapiMethod[] {
  if (cached) return cached;
  const out: HapiMethod[] = [];
  for (const [service, ctor] of Object.entries(proto)) {
    if (typeof ctor !== 'function' || !service.endsWith('Service')) continue;
    const prototype = (ctor as unknown as { prototype: Record<string, unknown> }).prototype;
    for (const method of Object.getOwnPropertyNames(prototype)) {
      const fn = prototype[method];
      if (method === 'constructor' || typeof fn !== 'function') continue;
      // Each generated method calls this.rpcCall(method, RequestType, ResponseType, ...): capture the types.
      let responseCtor: unknown;
      const probe = Object.create(prototype) as { rpcCall: RpcCall };
      probe.rpcCall = (_m, _req, res) => {
        responseCtor = res;
      };
      (fn as (this: unknown, req: unknown, cb: () => void) => void).call(probe, {}, () => undefined);
      // By type URL, not identity: the SDK bundles its own copy of these protos, and importing it can swap the
      // classes the generated service methods resolve at call time.
      const kind =
        typeUrl(responseCtor) === typeUrl(proto.TransactionResponse)
          ? 'transaction'
          : typeUrl(responseCtor) === typeUrl(proto.Response)
            ? 'query'
            : undefined;
      if (kind) out.push({ service, method, path: `/proto.${service}/${method}`, kind });
    }
  }
  cached = out;
  return out;
}

/** The methods this emulator implements; everything else in hapiMethods() answers NOT_SUPPORTED. */
export const IMPLEMENTED: ReadonlySet<string> = new Set([
  '/proto.ConsensusService/createTopic',
  '/proto.ConsensusService/updateTopic',
  '/proto.ConsensusService/deleteTopic',
  '/proto.ConsensusService/submitMessage',
  '/proto.ConsensusService/getTopicInfo',
  '/proto.CryptoService/createAccount',
  '/proto.CryptoService/updateAccount',
  '/proto.CryptoService/cryptoTransfer',
  '/proto.CryptoService/cryptoGetBalance',
  '/proto.CryptoService/getAccountInfo',
  '/proto.CryptoService/getTransactionReceipts',
  '/proto.CryptoService/getTxRecordByTxID',
]);

function typeUrl(ctor: unknown): string | undefined {
  const getTypeUrl = (ctor as { getTypeUrl?: () => string } | undefined)?.getTypeUrl;
  return typeof getTypeUrl === 'function' ? getTypeUrl.call(ctor) : undefined;
}
