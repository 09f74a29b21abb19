import { signalKey, type RunState } from '../publish/journal.js';
import { evalKindOf, type VerifiableSignal } from './signals.js';

/**
 * The raw responses a run journal kept (unless the run had `--no-keep-responses`), as `verifySignals` takes them:
 * the publisher can then check its own response hashes and answers after the reveal.
 */
export function journalResponses(state: RunState): (signal: VerifiableSignal) => string | null {
  return (signal) => {
    const kind = evalKindOf(signal.signal);
    if (!kind || signal.run !== state.start.run) return null;
    const result = state.signals.get(signalKey(kind, signal.subject))?.result;
    return result && result.kind !== 'availability' ? result.response : null;
  };
}
