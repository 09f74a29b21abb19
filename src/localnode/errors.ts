import { Hcs25Error, type ErrorCode } from '../core/errors.js';

/** Failures of the emulator itself: a port in use, a bad fault spec, an unreadable state directory. */
export class LocalNodeError extends Hcs25Error {
  constructor(code: ErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(code, message, options);
    this.name = 'LocalNodeError';
  }
}
