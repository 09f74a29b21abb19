/**
 * The HCS-25 scoring configuration `C`: versioned, validated at the edge, JSON Schema in
 * `schemas/scoring-config.schema.json`. `DEFAULT_SCORING_CONFIG` is the one source of truth for the defaults;
 * `hcs25 scores --print-config` prints it as a file to start from.
 *
 * Design choices (documented here because they change scores):
 * - Window: per (subject, signal id), the latest `count` signals in consensus order (default 10), or every signal
 *   observed within `seconds` before that pair's newest observation. Both are anchored at the newest observation, not
 *   at `now`, so an agent that was not re-evaluated keeps its last picture and is marked stale instead of vanishing.
 * - Observation time of a signal = min(fetchedAt, consensus time): a publisher cannot make a signal look fresher
 *   than the network saw it, and a signal cannot be older than when it was measured.
 * - Stale: a component whose newest observation is older than `freshnessSeconds` before `now` has status `stale`;
 *   its value is multiplied by `staleMultiplier` (HCS-25 m_stale).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { ScoringConfigError } from './aggregate.js';
import { ADAPTER_ID_PATTERN, SIGNAL_ID_PATTERN } from '../format/protocol.js';
import { SIGNAL_IDS } from '../format/schema-v1.js';
import { SIGNAL_IDS_V2 } from '../format/schema-v2.js';
import { contentDigest } from '../core/digest.js';

const COMPONENT_KEY = /^[a-z][a-z0-9_-]*(\.[a-z][a-z0-9_-]*)+$/;
const label = z.string().min(1).max(64).regex(/^\S+$/, 'must not contain whitespace');

export const windowSchema = z
  .discriminatedUnion('kind', [
    z
      .object({
        kind: z.literal('latest'),
        count: z.number().int().min(1).max(100_000).describe('how many of the newest signals count'),
      })
      .strict(),
    z
      .object({
        kind: z.literal('time'),
        seconds: z
          .number()
          .int()
          .min(1)
          .max(366 * 86_400)
          .describe('signals observed within this many seconds before the newest one count'),
      })
      .strict(),
  ])
  .describe('which signals of one subject and signal id enter a component');

export const componentSchema = z
  .object({
    key: z
      .string()
      .regex(COMPONENT_KEY, 'must be a dot-separated component key like availability.uptime')
      .describe('HCS-25 component key'),
    signal: z
      .string()
      .regex(SIGNAL_ID_PATTERN, 'must be an HCS-25 signal id')
      .describe('the signal id this component is computed from'),
    method: z
      .enum(['reachable-share', 'mean-score'])
      .describe(
        'reachable-share: 100 × share of probes that were reachable (a failed probe is a measurement, status ok); ' +
          'mean-score: mean of data.score, timeout/error signals scoring 0 (status ok when at least one signal is ok)',
      ),
    window: windowSchema.optional().describe('overrides the top-level window for this component'),
    nonScorableWhenUnavailable: z
      .boolean()
      .optional()
      .describe(
        'HCS-25: omit (not 0) when missing/timeout/error; the adapter still uses its default component if left empty',
      ),
  })
  .strict();

export const adapterConfigSchema = z
  .object({
    adapterId: z
      .string()
      .regex(ADAPTER_ID_PATTERN, 'must be hyphen-separated lowercase segments')
      .describe('HCS-25 adapter id'),
    contributionMode: z.enum(['universal', 'scoped', 'conditional']).default('conditional'),
    weight: z.number().min(0).max(1000).default(1).describe('weight in the composite; 0 = informational only'),
    includeRegistries: z
      .array(label)
      .max(100)
      .optional()
      .describe('applies only to subjects whose UAID registry is listed'),
    excludeRegistries: z
      .array(label)
      .max(100)
      .optional()
      .describe('never applies to subjects whose UAID registry is listed'),
    protocols: z.array(label).max(100).optional().describe('applies only to subjects whose UAID proto is listed'),
    excludeProtocols: z
      .array(label)
      .max(100)
      .optional()
      .describe('never applies to subjects whose UAID proto is listed'),
    defaultComponentKey: z
      .string()
      .regex(COMPONENT_KEY)
      .optional()
      .describe('HCS-25 default component key; default {adapterId}.score'),
    components: z.array(componentSchema).min(1).max(32),
  })
  .strict();

export const scoringConfigSchema = z
  .object({
    $schema: z.string().optional(),
    trustScoreConfigVersion: z
      .number()
      .int()
      .min(1)
      .describe('HCS-25 configuration version; increase it whenever anything below changes'),
    staleMultiplier: z
      .number()
      .min(0)
      .max(1)
      .default(1)
      .describe('HCS-25 m_stale: factor applied to stale component values'),
    freshnessSeconds: z
      .number()
      .int()
      .min(1)
      .describe('a component whose newest signal was observed longer ago than this (before now) is stale'),
    window: windowSchema.default({ kind: 'latest', count: 10 }),
    confidence: z
      .object({
        fullAtSamples: z
          .number()
          .int()
          .min(1)
          .max(100_000)
          .describe('a component reaches full confidence at this many signals'),
        staleFactor: z.number().min(0).max(1).describe('confidence factor for a stale component'),
      })
      .strict()
      .default({ fullAtSamples: 5, staleFactor: 0.5 })
      .describe(
        'sampleConfidence (reports only; the published trustConfidence is the share of ok components): per adapter, ' +
          'mean over its components of status factor × min(1, samples / fullAtSamples)',
      ),
    latency: z
      .object({
        signal: z.string().regex(SIGNAL_ID_PATTERN),
        window: windowSchema,
      })
      .strict()
      .default({ signal: SIGNAL_IDS.availability, window: { kind: 'latest', count: 100 } })
      .describe('latency p50/p95 are taken over the reachable probes in this window'),
    adapters: z.array(adapterConfigSchema).min(1).max(64),
  })
  .strict()
  .superRefine((config, ctx) => {
    const ids = new Set<string>();
    const keys = new Set<string>();
    for (const [i, adapter] of config.adapters.entries()) {
      if (adapter.adapterId === 'total')
        ctx.addIssue({ code: 'custom', path: ['adapters', i, 'adapterId'], message: '"total" is reserved' });
      if (ids.has(adapter.adapterId))
        ctx.addIssue({
          code: 'custom',
          path: ['adapters', i, 'adapterId'],
          message: `adapter id "${adapter.adapterId}" is used twice`,
        });
      ids.add(adapter.adapterId);
      for (const [j, component] of adapter.components.entries()) {
        if (keys.has(component.key)) {
          ctx.addIssue({
            code: 'custom',
            path: ['adapters', i, 'components', j, 'key'],
            message: `component key "${component.key}" is used twice`,
          });
        }
        keys.add(component.key);
      }
    }
  })
  .describe('HCS-25 scoring configuration for hcs25 scores');

export type ScoringConfig = z.output<typeof scoringConfigSchema>;
export type ScoringConfigInput = z.input<typeof scoringConfigSchema>;
export type AdapterConfig = ScoringConfig['adapters'][number];
export type ComponentConfig = AdapterConfig['components'][number];
export type WindowConfig = z.output<typeof windowSchema>;

/**
 * The spec's example adapters (HCS-25 Appendix A) for this project's signal catalog. Evals are not applicable to
 * MCP subjects: MCP is probed for availability only, so scoring them 0 there would punish a protocol, not an agent.
 */
export const DEFAULT_SCORING_CONFIG: ScoringConfig = Object.freeze({
  // 3: m_stale 1 (HCS-25's default when not configured) and a stale component rounded once, after m_stale.
  trustScoreConfigVersion: 3,
  staleMultiplier: 1,
  freshnessSeconds: 3 * 86_400,
  window: { kind: 'latest', count: 10 },
  confidence: { fullAtSamples: 5, staleFactor: 0.5 },
  latency: { signal: SIGNAL_IDS.availability, window: { kind: 'latest', count: 100 } },
  adapters: [
    {
      adapterId: 'availability',
      contributionMode: 'universal',
      weight: 1,
      // The availability adapter's typical exclusions: model catalogs where "reachable" is not defined.
      excludeRegistries: ['openrouter', 'near-ai'],
      components: [{ key: 'availability.uptime', signal: SIGNAL_IDS.availability, method: 'reachable-share' }],
    },
    {
      adapterId: 'simple-math',
      contributionMode: 'scoped',
      weight: 0.5,
      excludeProtocols: ['mcp'],
      components: [{ key: 'simple-math.score', signal: SIGNAL_IDS_V2.math, method: 'mean-score' }],
    },
    {
      adapterId: 'simple-science',
      contributionMode: 'scoped',
      weight: 0.5,
      excludeProtocols: ['mcp'],
      components: [{ key: 'simple-science.score', signal: SIGNAL_IDS_V2.science, method: 'mean-score' }],
    },
  ],
} satisfies ScoringConfig) as ScoringConfig;

/** Validates a scoring configuration value; the error names the first offending path. */
export function parseScoringConfig(value: unknown, source = 'scoring config'): ScoringConfig {
  const parsed = scoringConfigSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(root)';
    throw new ScoringConfigError(`${source}: ${where}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

/** Reads and validates a scoring configuration file. */
export function loadScoringConfig(file: string): ScoringConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ScoringConfigError(
      `cannot read scoring config ${file}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ScoringConfigError(`scoring config ${file} is not valid JSON: ${(err as Error).message}`);
  }
  return parseScoringConfig(value, `scoring config ${file}`);
}

/**
 * Digest of a scoring configuration (`sha256:` + base64url of its canonical JSON, `$schema` left out): published in
 * score explanations, so a consumer can tell whether two scores of the same config version used the same config.
 */
export function scoringConfigDigest(config: ScoringConfig): string {
  const { $schema: _, ...rest } = config;
  return contentDigest(rest);
}
