/**
 * What `verify` reports beside each signal's verdict, about how a run was published: signals submitted after their
 * run's reveal (anyone could have computed their answers by then), subjects their cited registry did not list when
 * the run started, and conflicting copies of one signal (the publisher equivocated). Pure.
 */
import { consensusNanos } from '../core/consensus-time.js';

/** What was checked of a signal (signals.ts says when each applies), in the order reports list them. */
export const VERDICTS = ['re-derived', 'commitment-checked', 'not-checkable', 'mismatch'] as const;
export type Verdict = (typeof VERDICTS)[number];
export type VerdictCounts = Record<Verdict, number>;

/** A later copy of a signal with other content than the first (the reader's `conflict` rejection). */
export interface Equivocation {
  run: string;
  signal: string;
  subject: string;
  payer: string;
  /** Where the conflicting copy is: sequence number and, in a pack, its index. */
  sequenceNumber: number;
  index?: number;
  /** Where the first copy (the one read) is. */
  firstSequence: number;
}

/**
 * One registry a run cites (its signals' `sources`), read as it was when the run started. A registry that could not
 * be read is not checkable for that run: never a mismatch.
 */
export interface RegistryCheck {
  run: string;
  /** The registry, `hcs://2/<topic>`. */
  source: string;
  /** The consensus time of the run's first signal on the topic: the registry is read up to then. */
  asOf: string;
  /** Subjects of the run that cite it. */
  cited: number;
  /** Of those, the ones it did not list at `asOf`; absent when it could not be read. */
  notListed?: string[];
  /**
   * Entries discovery could not resolve when read for the check (skipped): named here because a subject not listed
   * may be one of them if its metadata changed or went away since the run.
   */
  unresolved?: number;
  /** Why it could not be read. */
  notCheckable?: string;
}

/** The subjects of a run whose cited registry did not list them when it started, with that registry. */
export function unlistedSubjects(checks: Iterable<RegistryCheck>): Map<string, Map<string, RegistryCheck>> {
  const byRun = new Map<string, Map<string, RegistryCheck>>();
  for (const check of checks) {
    for (const subject of check.notListed ?? []) {
      let subjects = byRun.get(check.run);
      if (!subjects) {
        subjects = new Map();
        byRun.set(check.run, subjects);
      }
      if (!subjects.has(subject)) subjects.set(subject, check);
    }
  }
  return byRun;
}

/** Whether consensus time `a` is later than `b`; false when either is unknown (nothing is claimed without both). */
export function isLater(a: string | undefined, b: string | undefined): boolean {
  const x = a === undefined ? undefined : consensusNanos(a);
  const y = b === undefined ? undefined : consensusNanos(b);
  return x !== undefined && y !== undefined && x > y;
}
