export {
  startAgentFleet,
  scienceFacts,
  FLEET_AGENT_NAMES,
  type AgentFleet,
  type FleetAgentName,
  type FleetOptions,
} from './fleet.js';
export { startOpenAiAgent, OPENAI_BEHAVIOURS, type OpenAiBehaviour, type OpenAiAgentOptions } from './openai-agent.js';
export { startA2aAgent, type A2aAgentOptions } from './a2a-agent.js';
export { startMcpAgent } from './mcp-agent.js';
export { startPlainHttpAgent } from './http-agent.js';
export { createSolver, bareAnswer, wrongAnswer, type Solution, type KnownScienceFact } from './solver.js';
export type { RunningServer } from './server.js';
