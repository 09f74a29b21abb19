/**
 * hcs25 — the library. Everything the CLI does is available here; the CLI is a thin layer over these modules.
 *
 *   discover  → discoverAgents / loadAgentsFile
 *   evaluate  → evaluateAgents (transports: createTransport), graders gradeMath / gradeChoice
 *   build     → buildSignalMessage (hashed question ids, redacted responses, ≤ 1024 bytes)
 *   submit    → runSignals (journal, pre-set transaction ids, pipelined submitter), createSignalTopic, revealRun
 *   read      → readSignals / collectSignals, parseSignalMessage
 *   score     → computeScores (per subject) on top of aggregateTrustScore (the HCS-25 aggregation)
 *   test      → startLocalNode (embedded Hedera local-node emulator), startAgentFleet, startHcs10Fleet, runDemo
 */
export * from './errors.js';

// Configuration and networks
export { loadConfig, requireOperator, type ResolvedConfig, type OperatorConfig, type LoadConfigOptions } from './config/load.js';
export { NETWORK_PRESETS, LOCAL_GENESIS_OPERATOR, LOCAL_PORTS, localNetwork, type NetworkConfig, type LedgerName } from './config/networks.js';
export { configInputSchema, ENV_VARS, type ConfigInput } from './config/schema.js';
export { Secret } from './config/secret.js';
export { createClient, parsePrivateKey } from './hedera/client.js';

// On-chain messages
export * from './signals/index.js';
export { renderJsonSchemas } from './json-schemas.js';

// Discovery
export type { Agent, Protocol } from './registry/types.js';
export { PROTOCOLS } from './registry/types.js';
export { discoverAgents, RegistryError, type DiscoverOptions, type DiscoverResult } from './registry/discover.js';
export { loadAgentsFile, parseAgentsFile } from './registry/agents-file.js';
export { agentRecordSchema, type AgentRecord } from './registry/agent-record.js';
export { buildUaid } from './registry/uaid.js';
export { createRegistry, registerAgent, registryShape } from './registry/write.js';
export { MirrorRestClient, MirrorError, type TopicMessage } from './hedera/mirror-rest.js';
export { readHcs1File, encodeHcs1File } from './hedera/hcs1.js';
export { inscribeHcs1 } from './hedera/hcs1-write.js';

// Evaluation
export * from './evals/index.js';
export { evaluateAgents, questionFor, type RunnerOptions } from './evals/runner.js';
export { createTransport, HttpClient, type CreateTransportOptions } from './transports/index.js';
export type { Transport, AskResult, AskOptions, ProbeResult } from './transports/types.js';

// Publishing
export { runSignals, type RunOptions, type RunReport } from './publisher/run.js';
export { createSignalTopic } from './publisher/topic.js';
export { revealRun } from './publisher/reveal.js';
export { readJournal, listRuns } from './publisher/journal.js';

// Consuming and scoring
export * from './consumer/index.js';

// HCS-10
export { ensureRunnerIdentity, provisionHcs10Agent } from './hcs10/identity.js';
export { createHcs10Transport } from './transports/hcs10.js';

// Local testing
export { startLocalNode, type LocalNode, type LocalNodeOptions } from './localnode/index.js';
export { startAgentFleet } from './devtools/agents/index.js';
export { startHcs10Fleet } from './devtools/hcs10-agents.js';
export { runDemo, type DemoOptions, type DemoResult } from './devtools/demo.js';
