/**
 * The pipeline, one action per stage. Each takes the hcs25 client first (it owns the connections), then its
 * parameters: discover → evaluate → build → publish → read → score → reveal → verify.
 */
export {
  discoverAgents,
  type DiscoverAgentsParameters,
  type DiscoverAgentsReturnType,
} from './discover/discover-agents.js';
export {
  evaluateAgents,
  type EvaluateAgentsParameters,
  type EvaluateAgentsReturnType,
  type Hcs10AskParameters,
} from './evaluate/evaluate-agents.js';
export { buildSignal, buildSignals, type BuildSignalsParameters, type BuiltSignal } from './publish/build-signals.js';
export {
  publishSignals,
  type PublishSignalsParameters,
  type PublishSignalsReturnType,
} from './publish/publish-signals.js';
export {
  runSignals,
  type AgentSource,
  type RunSignalsParameters,
  type RunSignalsReturnType,
  type RunReport,
  type RunProgress,
  type DryRunEntry,
  type SignalSummary,
} from './publish/run-signals.js';
export { createTopic, type CreateTopicParameters, type CreateTopicReturnType } from './publish/create-topic.js';
export {
  describeTopic,
  type DescribeTopicParameters,
  type DescribeTopicReturnType,
} from './read/describe-topic.js';
export {
  readSignals,
  collectSignals,
  getSignalTopic,
  type ReadSignalsParameters,
  type ReadSignalsReturnType,
} from './read/read-signals.js';
export {
  scoreSignals,
  publishScoreRecords,
  type ScoreSignalsParameters,
  type ScoreSignalsReturnType,
  type PublishScoresParameters,
} from './score/score-signals.js';
export type { PublishScoresResult, PublishedScore } from './score/publish-scores.js';
export {
  RegistryCitations,
  resolveNames,
  type ResolveNamesParameters,
  type ResolveNamesReturnType,
} from './read/resolve-names.js';
export { revealRun, type RevealRunParameters, type RevealRunReturnType } from './publish/reveal-run.js';
export {
  watchRegistry,
  type WatchRegistryParameters,
  type WatchRegistryReturnType,
} from './watch/watch-registry.js';
export { verifySignals, type VerifySignalsParameters, type VerifySignalsReturnType } from './verify/verify-signals.js';
export {
  checkScores,
  checkScoreRecords,
  type CheckScoresParameters,
  type CheckScoresReturnType,
  type PublishedScoreCheck,
} from './verify/check-scores.js';
export { indexSignals, type IndexSignalsParameters, type IndexSignalsReturnType } from './serve/index-signals.js';
export {
  startServer,
  DEFAULT_SERVE_PORT,
  type StartServerParameters,
  type StartServerReturnType,
} from './serve/serve-scores.js';
export {
  startServerWorkers,
  type StartServerWorkersParameters,
  type StartServerWorkersReturnType,
} from './serve/serve-workers.js';
