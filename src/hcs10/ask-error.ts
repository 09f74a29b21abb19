import { Hcs25Error } from '../core/errors.js';
import type { FailureKind } from '../net/failure.js';

/** Why an HCS-10 ask failed, as a transport failure kind (kept apart from the requester so the transport can load it cheaply). */
export class Hcs10AskError extends Hcs25Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly transient = false,
  ) {
    super('HCS10_ASK', message);
    this.name = 'Hcs10AskError';
  }
}
