/**
 * Build: eval results → signal messages (hashed question ids, redacted responses, ≤ 1024 bytes): one-signal format-3
 * messages, which the publisher packs, or v2 signals and v1 messages for finishing a run journaled in those formats. A result that cannot be built
 * (too large, refused by the schema) is kept with the reason, never published.
 */
import { Hcs25Error, errorMessage } from '../core/errors.js';
import type { AnyEvalResult } from '../evaluate/types.js';
import { resultKey } from './journal.js';
import { buildSignalMessage } from '../format/write-v1.js';
import type { BuiltMessage } from '../format/protocol.js';
import { buildSignalV2 } from '../format/write.js';
import { buildSignalV3 } from '../format/write-v3.js';
import type { SignalMessage } from '../format/schema-v1.js';
import type { SignalMessageV2 } from '../format/schema-v2.js';
import type { SignalsMessageV3 } from '../format/schema-v3.js';

export interface BuildSignalsParameters {
  /** ULID of the run. */
  run: string;
  /** The run's secret key: it keys the question hashes until `reveal` publishes it. */
  runKey: Buffer;
  /** On-chain format (default 3). 1 and 2 only finish runs that began in them (`runFormat` of the journal). */
  version?: 1 | 2 | 3;
}

export interface BuiltSignal {
  /** The dedupe key of the signal within its run: `{kind}|{subject}`. */
  key: string;
  result: AnyEvalResult;
  message?: BuiltMessage<SignalMessage | SignalMessageV2 | SignalsMessageV3>;
  buildError?: { code: string; message: string };
}

export function buildSignal(result: AnyEvalResult, parameters: BuildSignalsParameters): BuiltSignal {
  const key = resultKey(result);
  try {
    const { version = 3 } = parameters;
    const build = version === 1 ? buildSignalMessage : version === 2 ? buildSignalV2 : buildSignalV3;
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
