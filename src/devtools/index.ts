/**
 * `hcs25/devtools`: what a developer tests against, apart from the library — sample agents over every protocol
 * (A2A, OpenAI-compatible, MCP, plain HTTP), sample HCS-10 agents, and the demo that runs the whole job on the
 * embedded local node (`hcs25/localnode`).
 */
export { startAgentFleet } from './agents/index.js';
export { startHcs10Fleet } from './hcs10-agents.js';
export { runDemo, DemoError, type DemoOptions, type DemoResult } from './demo.js';
export { startPostgres, type PostgresServer } from './postgres.js';
