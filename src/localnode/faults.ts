/**
 * Fault injection for tests and for users who want to watch a client cope: precheck codes (BUSY,
 * PLATFORM_TRANSACTION_NOT_CREATED, …) and gRPC status errors (UNAVAILABLE, …) for the next N calls of a method.
 * A method is matched by its name (`submitMessage`), `Service/method`, the full path, or `*` for every call.
 */
import { statusCode } from './codec.js';
import { LocalNodeError } from './errors.js';

export type Fault = { kind: 'precheck'; status: number } | { kind: 'grpc'; code: number };

interface Rule {
  match: string;
  fault: Fault;
  remaining: number;
}

function matches(match: string, path: string): boolean {
  if (match === '*' || match === path) return true;
  const [, service = '', method = ''] = /^\/(?:[\w.]+\.)?(\w+)\/(\w+)$/.exec(path) ?? [];
  return match === method || match === `${service}/${method}`;
}

export class FaultPlan {
  private rules: Rule[] = [];

  injectPrecheck(method: string, status: string, count = 1): void {
    const code = statusCode(status);
    if (code === undefined) {
      throw new LocalNodeError('BAD_FAULT', `unknown precheck status "${status}"`, {
        hint: 'use a HAPI ResponseCodeEnum name such as BUSY or PLATFORM_TRANSACTION_NOT_CREATED',
      });
    }
    this.add(method, { kind: 'precheck', status: code }, count);
  }

  injectGrpcError(method: string, code: number, count = 1): void {
    if (!Number.isInteger(code) || code < 1 || code > 16) {
      throw new LocalNodeError('BAD_FAULT', `gRPC status code must be 1..16, got ${code}`, {
        hint: 'e.g. 14 for UNAVAILABLE',
      });
    }
    this.add(method, { kind: 'grpc', code }, count);
  }

  private add(match: string, fault: Fault, count: number): void {
    if (!(count > 0))
      throw new LocalNodeError('BAD_FAULT', `fault count must be positive, got ${count}`, {
        hint: 'pass Infinity for "always"',
      });
    this.rules.push({ match, fault, remaining: count });
  }

  /** The fault for this call, if any, consuming one use of the first matching rule of an applicable kind. */
  take(path: string, kinds: ReadonlyArray<Fault['kind']> = ['grpc', 'precheck']): Fault | undefined {
    if (this.rules.length === 0) return undefined;
    for (const r of this.rules) {
      if (!kinds.includes(r.fault.kind) || !matches(r.match, path)) continue;
      r.remaining--;
      if (r.remaining <= 0) this.rules = this.rules.filter((x) => x !== r);
      return r.fault;
    }
    return undefined;
  }

  clear(): void {
    this.rules = [];
  }
}

/** The first fault of the first plan that has one: a node's own plan before the network-wide one. */
export function takeFault(
  plans: readonly FaultPlan[],
  path: string,
  kinds?: ReadonlyArray<Fault['kind']>,
): Fault | undefined {
  for (const plan of plans) {
    const fault = plan.take(path, kinds);
    if (fault) return fault;
  }
  return undefined;
}
