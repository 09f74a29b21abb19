/**
 * Build: eval results → HCS-25 signal messages (hashed question ids, redacted responses, ≤ 1024 bytes): v2 signals,
 * which the publisher packs, or v1 messages for finishing a run journaled before v2. A result that cannot be built
 * (too large, refused by the schema) is kept with the reason, never published.
 */
import { Hcs25Error, errorMessage } from '../core/errors.js';
import type { AnyEvalResult } from '../evaluate/types.js';
import { resultKey } from './journal.js';
import { buildSignalMessage } from '../format/write-v1.js';
import type { BuiltMessage } from '../format/protocol.js';
import { buildSignalV2 } from '../format/write.js';
import type { SignalMessage } from '../format/schema-v1.js';
import type { SignalMessageV2 } from '../format/schema-v2.js';

export interface BuildSignalsParameters {
  /** ULID of the run. */
  run: string;
  /** The run's secret key: it keys the question hashes until `reveal` publishes it. */
  runKey: Buffer;
  /** Message version (default 2). 1 only finishes a run that began with v1 messages. */
  version?: 1 | 2;
}

export interface BuiltSignal {
  /** The dedupe key of the signal within its run: `{kind}|{subject}`. */
  key: string;
  result: AnyEvalResult;
  message?: BuiltMessage<SignalMessage | SignalMessageV2>;
  buildError?: { code: string; message: string };
}

export function buildSignal(result: AnyEvalResult, parameters: BuildSignalsParameters): BuiltSignal {
  const key = resultKey(result);
  try {
    const build = parameters.version === 1 ? buildSignalMessage : buildSignalV2;
    return { key, result, message: build(result, parameters) };
  } catch (err) {
    return {
      key,
      result,
      buildError: { code: err instanceof Hcs25Error ? err.code : 'BUILD', message: errorMessage(err) },
    };
  }
}

/** Builds each result as it arrives, so publishing can begin while other agents are still being asked. */
export async function* buildSignals(
  results: AsyncIterable<AnyEvalResult>,
  parameters: BuildSignalsParameters,
): AsyncGenerator<BuiltSignal> {
  for await (const result of results) yield buildSignal(result, parameters);
}
