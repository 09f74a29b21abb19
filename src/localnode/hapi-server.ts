/**
 * The consensus node's gRPC server (`/proto.<Service>/<method>`, plaintext, default port 50211): faults first,
 * then transactions to the ledger's precheck and queries to the query engine.
 */
import { performance } from 'node:perf_hooks';
import { proto } from '@hashgraph/proto';
import { Status, toLong } from './codec.js';
import { takeFault, type FaultPlan } from './faults.js';
import { transactionFee } from './fees.js';
import { grpc, newServer, rawMethod } from './grpc.js';
import type { Ledger } from './ledger.js';
import { queryStatusResponse, type QueryEngine } from './queries.js';
import { IMPLEMENTED, hapiMethods, type HapiMethod } from './services.js';
import { decodeTransaction } from './transaction.js';

/** In-process counters: calls per method and time spent in the emulator's own handlers. */
export interface NodeStats {
  calls: Record<string, number>;
  transactions: number;
  queries: number;
  handlerMs: number;
}

export function newStats(): NodeStats {
  return { calls: {}, transactions: 0, queries: 0, handlerMs: 0 };
}

function transactionResponse(status: number, cost?: bigint): Buffer {
  return Buffer.from(
    proto.TransactionResponse.encode({
      nodeTransactionPrecheckCode: status,
      ...(cost ? { cost: toLong(cost) } : {}),
    }).finish(),
  );
}

export interface HapiDeps {
  ledger: Ledger;
  queries: QueryEngine;
  /** The node's own fault plan first, then the network-wide one. */
  faults: FaultPlan[];
  stats: NodeStats;
  /** This node's account number (0.0.3, 0.0.4, …). */
  nodeAccount: number;
  /**
   * How long an answer takes to go back, ms. The call is handled first: a node stopped meanwhile has accepted the
   * transaction but its caller sees the call cancelled, as when a real node goes down mid-call.
   */
  latencyMs(): number;
}

function handle(m: HapiMethod, raw: Buffer, deps: HapiDeps): Buffer {
  const implemented = IMPLEMENTED.has(m.path);
  if (m.kind === 'query') {
    deps.stats.queries++;
    return Buffer.from(deps.queries.answer(raw, implemented));
  }
  deps.stats.transactions++;
  if (!implemented) return transactionResponse(Status.NOT_SUPPORTED);
  const decoded = decodeTransaction(raw);
  if (!decoded.ok) return transactionResponse(decoded.status);
  const status = deps.ledger.submit(decoded.tx, deps.nodeAccount);
  // Like the node, an INSUFFICIENT_TX_FEE answer says what the fee would have been.
  return transactionResponse(
    status,
    status === Status.INSUFFICIENT_TX_FEE ? transactionFee(decoded.tx.kind) : undefined,
  );
}

export function createHapiServer(deps: HapiDeps): grpc.Server {
  const server = newServer();
  const byService = new Map<string, HapiMethod[]>();
  for (const m of hapiMethods()) byService.set(m.service, [...(byService.get(m.service) ?? []), m]);
  for (const methods of byService.values()) {
    const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
    const implementation: grpc.UntypedServiceImplementation = {};
    for (const m of methods) {
      definition[m.method] = rawMethod(m.path, m.method, false);
      const unary: grpc.handleUnaryCall<Buffer, Buffer> = (call, callback) => {
        deps.stats.calls[m.method] = (deps.stats.calls[m.method] ?? 0) + 1;
        const fault = takeFault(deps.faults, m.path);
        if (fault?.kind === 'grpc') {
          callback({ code: fault.code, details: 'fault injected by the local node emulator' });
          return;
        }
        if (fault?.kind === 'precheck') {
          callback(
            null,
            m.kind === 'query'
              ? Buffer.from(queryStatusResponse(call.request, fault.status))
              : transactionResponse(fault.status),
          );
          return;
        }
        const t0 = performance.now();
        let response: Buffer;
        try {
          response = handle(m, call.request, deps);
        } catch (err) {
          callback({
            code: grpc.status.INTERNAL,
            details: `emulator error: ${err instanceof Error ? err.message : String(err)}`,
          });
          return;
        } finally {
          deps.stats.handlerMs += performance.now() - t0;
        }
        const latency = deps.latencyMs();
        if (latency > 0) setTimeout(() => callback(null, response), latency);
        else callback(null, response);
      };
      implementation[m.method] = unary;
    }
    server.addService(definition, implementation);
  }
  return server;
}
