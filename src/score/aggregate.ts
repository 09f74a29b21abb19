import { Hcs25Error } from '../core/errors.js';
import { ADAPTER_ID_PATTERN, type SignalStatus } from '../format/protocol.js';

export type ContributionMode = 'universal' | 'scoped' | 'conditional';

export interface ComponentInput {
  key: string;
  value: number;
  status: SignalStatus;
  /** Declared non-scorable when unavailable: omitted (and listed as unavailable) instead of scoring 0. */
  nonScorable?: boolean;
}

export interface AdapterInput {
  adapterId: string;
  /** HCS-25 default: conditional. */
  contributionMode?: ContributionMode;
  /** HCS-25 default: 1. Weight 0 is informational only. */
  weight?: number;
  includeRegistries?: string[];
  excludeRegistries?: string[];
  /** The `appliesTo` predicate, on the subject's protocol (UAID `proto`). */
  protocols?: string[];
  /** Protocols the adapter never applies to (a subject without `proto` is not excluded). */
  excludeProtocols?: string[];
  /** HCS-25 default: `{adapterId}.score`. */
  defaultComponentKey?: string;
  components: ComponentInput[];
}

export interface AggregateInput {
  subject: { id: string; registry?: string; protocol?: string };
  trustScoreConfigVersion: number;
  /** m_stale ∈ [0,1]; HCS-25 default 1. */
  staleMultiplier?: number;
  adapters: AdapterInput[];
  /** Timestamp for trustScoreUpdatedAt; pass one for reproducible output. */
  now?: Date;
}

export interface AggregateResult {
  trustScores: { total: number; [adapterId: string]: number };
  components: Record<string, { value: number; status: SignalStatus }>;
  /** Non-scorable components that were unavailable, omitted from their adapter. */
  unavailable: string[];
  /** Adapters left out because they do not apply to the subject. */
  notApplicable: string[];
  /** Adapters whose totals entered the composite denominator, with the weights used and c(a) (share of `ok` components). */
  denominator: Array<{ adapterId: string; weight: number; total: number; confidence: number }>;
  /** The reference's trustConfidence: Σ w(a)·c(a) / Σ w(a) over the denominator, 4 decimals; 0 when it is empty. */
  trustConfidence: number;
  trustScoreConfigVersion: number;
  trustScoreUpdatedAt: string;
}

export class ScoringConfigError extends Hcs25Error {
  constructor(message: string) {
    super('SCORING_CONFIG', message, { hint: 'fix the scoring configuration; see schemas/scoring-config.schema.json' });
    this.name = 'ScoringConfigError';
  }
}

const COMPONENT_KEY = /^\S+$/;
const UNAVAILABLE: ReadonlySet<SignalStatus> = new Set(['missing', 'timeout', 'error']);

/**
 * The HCS-25 aggregation (Normalization + Aggregation sections), as a pure function: the same input gives the same
 * output. Component values are clamped to [0,100]; stale values are multiplied by m_stale; missing/timeout/error score 0
 * unless non-scorable; adapter total = mean of its components; composite = weighted mean over the denominator.
 * Rounding (2 decimals) happens at the reference implementation's points, once each: each component value (a stale
 * one after m_stale, never before), each adapter total, and the composite computed from the rounded totals.
 */
export function aggregateTrustScore(input: AggregateInput): AggregateResult {
  validateAggregation(input);
  const staleMultiplier = input.staleMultiplier ?? 1;
  const trustScores: AggregateResult['trustScores'] = { total: 0 };
  const components: AggregateResult['components'] = {};
  const unavailable: string[] = [];
  const notApplicable: string[] = [];
  const denominator: AggregateResult['denominator'] = [];

  for (const adapter of input.adapters) {
    if (!isApplicable(adapter, input.subject)) {
      notApplicable.push(adapter.adapterId);
      continue;
    }
    const mode = adapter.contributionMode ?? 'conditional';
    const weight = adapter.weight ?? 1;

    // Components are written as they are kept: an adapter that keeps none writes none (unless it synthesizes one).
    let sum = 0;
    let kept = 0;
    let ok = 0;
    for (const component of adapter.components) {
      if (UNAVAILABLE.has(component.status) && component.nonScorable) {
        unavailable.push(component.key);
        continue;
      }
      const value = componentValue(component.value, component.status, staleMultiplier);
      components[component.key] = { value, status: component.status };
      sum += value;
      kept++;
      if (component.status === 'ok') ok++;
    }
    if (kept === 0) {
      if (mode === 'conditional') continue;
      components[adapter.defaultComponentKey ?? `${adapter.adapterId}.score`] = { value: 0, status: 'missing' };
      kept = 1;
    }

    // Rounded where the reference implementation rounds (each component, each adapter total, then the composite),
    // so two implementations agree to the cent.
    const total = round2(sum / kept);
    trustScores[adapter.adapterId] = total;
    // Weight 0 is informational: its total is shown but it stays out of the denominator.
    if (weight > 0) denominator.push({ adapterId: adapter.adapterId, weight, total, confidence: ok / kept });
  }

  const weightSum = denominator.reduce((sum, d) => sum + d.weight, 0);
  trustScores.total =
    weightSum === 0 ? 0 : round2(clamp(denominator.reduce((sum, d) => sum + d.total * d.weight, 0) / weightSum));
  const trustConfidence =
    weightSum === 0 ? 0 : roundTo(denominator.reduce((sum, d) => sum + d.weight * d.confidence, 0) / weightSum, 4);
  return {
    trustScores,
    components,
    unavailable,
    notApplicable,
    denominator,
    trustConfidence,
    trustScoreConfigVersion: input.trustScoreConfigVersion,
    trustScoreUpdatedAt: (input.now ?? new Date()).toISOString(),
  };
}

/**
 * The value a component contributes, as the reference computes it: clamp(value), or for a stale one
 * clamp(value × m_stale), rounded once; rounding before the multiplication too would move a cent in a few cases.
 */
export function componentValue(value: number, status: SignalStatus, staleMultiplier: number): number {
  if (UNAVAILABLE.has(status)) return 0;
  const finite = Number.isFinite(value) ? value : 0;
  return round2(clamp(status === 'stale' ? finite * staleMultiplier : finite));
}

export function isApplicable(
  adapter: Pick<AdapterInput, 'includeRegistries' | 'excludeRegistries' | 'protocols' | 'excludeProtocols'>,
  subject: AggregateInput['subject'],
): boolean {
  const registry = subject.registry;
  if (adapter.includeRegistries && adapter.includeRegistries.length > 0) {
    if (registry === undefined || !adapter.includeRegistries.includes(registry)) return false;
  }
  if (registry !== undefined && adapter.excludeRegistries?.includes(registry)) return false;
  if (adapter.protocols && adapter.protocols.length > 0) {
    if (subject.protocol === undefined || !adapter.protocols.includes(subject.protocol)) return false;
  }
  if (subject.protocol !== undefined && adapter.excludeProtocols?.includes(subject.protocol)) return false;
  return true;
}

/** What `aggregateTrustScore` checks before aggregating: everything it checks is configuration, not subject. */
export function validateAggregation(
  input: Pick<AggregateInput, 'trustScoreConfigVersion' | 'staleMultiplier' | 'adapters'>,
): void {
  if (!Number.isInteger(input.trustScoreConfigVersion) || input.trustScoreConfigVersion < 1) {
    throw new ScoringConfigError(
      `trustScoreConfigVersion must be a positive integer, got ${input.trustScoreConfigVersion}`,
    );
  }
  const m = input.staleMultiplier;
  if (m !== undefined && !(Number.isFinite(m) && m >= 0 && m <= 1)) {
    throw new ScoringConfigError(`staleMultiplier must be within [0,1], got ${m}`);
  }
  const ids = new Set<string>();
  const keys = new Set<string>();
  for (const adapter of input.adapters) {
    if (!ADAPTER_ID_PATTERN.test(adapter.adapterId)) {
      throw new ScoringConfigError(
        `adapter id "${adapter.adapterId}" does not match ${ADAPTER_ID_PATTERN} (hyphen-separated lowercase segments)`,
      );
    }
    if (adapter.adapterId === 'total') throw new ScoringConfigError('"total" is reserved for the composite score');
    if (ids.has(adapter.adapterId)) throw new ScoringConfigError(`adapter id "${adapter.adapterId}" is used twice`);
    ids.add(adapter.adapterId);
    const w = adapter.weight;
    if (w !== undefined && !(Number.isFinite(w) && w >= 0)) {
      throw new ScoringConfigError(`adapter "${adapter.adapterId}" weight must be a finite number ≥ 0, got ${w}`);
    }
    const defaultKey = adapter.defaultComponentKey;
    for (const key of [...adapter.components.map((c) => c.key), ...(defaultKey ? [defaultKey] : [])]) {
      if (!COMPONENT_KEY.test(key))
        throw new ScoringConfigError(`component key "${key}" must not be empty or contain whitespace`);
    }
    for (const c of adapter.components) {
      if (keys.has(c.key)) throw new ScoringConfigError(`component key "${c.key}" appears twice`);
      keys.add(c.key);
    }
  }
}

function clamp(value: number): number {
  return Math.min(100, Math.max(0, value));
}

/** Two decimals the reference's way (its `roundScore`): Math.round of value × 100, so both agree to the cent. */
export function round2(value: number): number {
  return roundTo(value, 2);
}

function roundTo(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}
