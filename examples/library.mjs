import { writeFileSync } from 'node:fs';
import { createHcs25Client, createTopic, discoverAgents, loadConfig, localNetwork, runSignals } from 'hcs25';
import { startAgentFleet } from 'hcs25/devtools';
import { startLocalNode } from 'hcs25/localnode';

const node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, quiet: true });
const fleet = await startAgentFleet({ include: ['perfect', 'wrong'] });
writeFileSync('agents.json', JSON.stringify(fleet.agents));
const client = createHcs25Client({
  ...loadConfig({ flags: { network: 'local' } }),
  network: localNetwork('127.0.0.1', node.ports),
});
try {
  const { agents } = await discoverAgents(client, { agentsFile: 'agents.json' });
  const topic = await createTopic(client);
  const report = await runSignals(client, {
    source: { agents },
    topic: topic.topicId,
    evals: ['availability', 'math'],
  });
  console.log(`${report.status}: ${report.signals.published} signals on topic ${topic.topicId}`);
} finally {
  await client.close();
  await fleet.stop();
  await node.stop();
}
