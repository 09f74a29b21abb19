/**
 * hcs25 — the library. The root API is the client, the actions (one per pipeline stage) and the on-chain formats:
 *
 *   const client = createHcs25Client(loadConfig());
 *   discoverAgents(client, …) → evaluateAgents(client, …) → buildSignals(…) → publishSignals(client, …)
 *   runSignals(client, …)  (the whole pipeline, journaled and resumable)
 *   readSignals(client, …) → scoreSignals(client, …);  revealRun(client, …) → verifySignals(client, …)
 *
 * The embedded local node is `hcs25/localnode`; the sample agents and the demo are `hcs25/devtools`.
 */
export * from './core/errors.js';
export { PROTOCOLS, type Agent, type Protocol } from './core/agent.js';
export { ENTITY_ID_PATTERN, isEntityId } from './core/ids.js';
export { parseHrl, formatHrl, type Hrl } from './core/hrl.js';
export { LOCAL_PORTS } from './core/ports.js';

// The client and configuration
export { createHcs25Client, PIPELINE_TUNING, type Hcs25Client, type Hcs25ClientOptions } from './client.js';
export {
  loadConfig,
  requireOperator,
  type ResolvedConfig,
  type OperatorConfig,
  type LoadConfigOptions,
} from './config/load.js';
export {
  NETWORK_PRESETS,
  LOCAL_GENESIS_OPERATOR,
  localNetwork,
  type NetworkConfig,
  type LedgerName,
} from './config/networks.js';
export { configInputSchema, ENV_VARS, type ConfigInput } from './config/schema.js';
export { Secret } from './config/secret.js';

// The actions
export * from './actions.js';

// On-chain formats
export * from './format/index.js';
export { renderJsonSchemas } from './json-schemas.js';
export { agentRecordSchema, type AgentRecord } from './discover/agent-record.js';

// Evaluation: questions and graders (pure)
export * from './evaluate/index.js';

// Scoring and reports (pure)
export * from './read/types.js';
export * from './score/aggregate.js';
export * from './score/scoring-config.js';
export { parseUaid, uaidRouting, type UaidParts, type UaidRouting } from './discover/uaid.js';
export * from './read/reader.js';
export { consensusIso, consensusMs } from './core/consensus-time.js';
export * from './score/scores.js';
export * from './report/table.js';
export * from './report/csv.js';
export * from './report/html-report.js';

// Verification (pure; the action `verifySignals` reads a topic and calls it)
export {
  checkPublishedScore,
  checkPublishedScores,
  explanationOf,
  recomputeScore,
  type CheckScoreOptions,
  type ScoreCheck,
  type ScoreChecks,
  type ScoreDrift,
  type ScoreRecordLike,
} from './verify/score.js';
export {
  evalKindOf,
  VERDICTS,
  type MismatchField,
  type NotCheckableReason,
  type RunVerification,
  type SignalVerification,
  type VerdictCounts,
  type VerifiableReveal,
  type VerifiableSignal,
  type Verdict,
  type VerifyReport,
} from './verify/signals.js';
export type { Equivocation, RegistryCheck } from './verify/findings.js';
export { journalResponses } from './verify/journal.js';

// hcs25 serve: the store (PGlite or PostgreSQL, engines loaded on open); the indexer is the action `indexSignals`
export { openStore } from './serve/store/index.js';
export type * from './serve/store/types.js';
// A webhook receiver's check of a delivery from hcs25 serve (docs/serve.md, "Webhooks").
export { verifyDelivery as verifyWebhookDelivery } from './serve/hooks/signature.js';
