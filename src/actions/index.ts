/**
 * The pipeline, one action per stage. Each takes the hcs25 client first (it owns the connections), then its
 * parameters: discover → evaluate → build → publish → read → score → reveal → verify.
 */
export { discoverAgents, type DiscoverAgentsParameters, type DiscoverAgentsReturnType } from './discover-agents.js';
export {
  evaluateAgents,
  type EvaluateAgentsParameters,
  type EvaluateAgentsReturnType,
  type Hcs10AskParameters,
} from './evaluate-agents.js';
export { buildSignal, buildSignals, type BuildSignalsParameters, type BuiltSignal } from './build-signals.js';
export { publishSignals, type PublishSignalsParameters, type PublishSignalsReturnType } from './publish-signals.js';
export {
  runSignals,
  type AgentSource,
  type RunSignalsParameters,
  type RunSignalsReturnType,
  type RunReport,
  type RunProgress,
  type DryRunEntry,
  type SignalSummary,
} from './run-signals.js';
export { createTopic, type CreateTopicParameters, type CreateTopicReturnType } from './create-topic.js';
export { readSignals, collectSignals, getSignalTopic, type ReadSignalsParameters, type ReadSignalsReturnType } from './read-signals.js';
export { scoreSignals, publishScoreRecords, type ScoreSignalsParameters, type ScoreSignalsReturnType, type PublishScoresParameters } from './score-signals.js';
export type { PublishScoresResult, PublishedScore } from '../consumer/publish-scores.js';
export { RegistryCitations, resolveNames, type ResolveNamesParameters, type ResolveNamesReturnType } from './resolve-names.js';
export { revealRun, type RevealRunParameters, type RevealRunReturnType } from './reveal-run.js';
export {
  watchRegistry,
  type WatchRegistryParameters,
  type WatchRegistryReturnType,
} from './watch-registry.js';
export { verifySignals, type VerifySignalsParameters, type VerifySignalsReturnType } from './verify-signals.js';
export {
  checkScores,
  checkScoreRecords,
  type CheckScoresParameters,
  type CheckScoresReturnType,
  type PublishedScoreCheck,
} from './check-scores.js';
export { indexSignals, type IndexSignalsParameters, type IndexSignalsReturnType } from './index-signals.js';
export { startServer, DEFAULT_SERVE_PORT, type StartServerParameters, type StartServerReturnType } from './serve-scores.js';
export { startServerWorkers, type StartServerWorkersParameters, type StartServerWorkersReturnType } from './serve-workers.js';
