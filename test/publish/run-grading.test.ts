/**
 * `run --grader` and `--science-bank`: a new run journals its grading choices, asks from the private bank and grades
 * with the chosen grader; a resume grades the same way and refuses a bank that changed since the run began.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedConfig } from '../../src/config/load.js';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { loadScienceBank } from '../../src/evaluate/science.js';
import { readJournal } from '../../src/publish/journal.js';
import { runWith } from './helpers.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import type { Agent } from '../../src/core/agent.js';
import { emulatorConfig, startHarness, tempDir, type Harness } from './helpers.js';

let h: Harness;
let fleet: AgentFleet;
let topic: string;
const tmp = tempDir();
const bankFile = join(tmp.dir, 'private-bank.json');
const bank = {
  version: 1,
  questions: [
    {
      id: 'sci:astronomy:red-planet',
      category: 'astronomy',
      stem: 'Which planet is known as the Red Planet?',
      options: ['Venus', 'Mars', 'Jupiter', 'Mercury'],
      answer: 'B',
    },
    {
      id: 'sci:astronomy:star-sun',
      category: 'astronomy',
      stem: 'What kind of object is the Sun?',
      options: ['A planet', 'A comet', 'A star', 'A moon'],
      answer: 'C',
    },
  ],
};

function config(): ResolvedConfig {
  return emulatorConfig(h, tmp.dir, { stateDir: join(tmp.dir, 'state'), budgetMs: 2_000 });
}

beforeAll(async () => {
  writeFileSync(bankFile, JSON.stringify(bank));
  h = await startHarness();
  fleet = await startAgentFleet({ include: ['perfect'], scienceBank: loadScienceBank(bankFile) });
  topic = (await createSignalTopic(h.client)).topicId;
});

afterAll(async () => {
  await fleet.stop();
  await h.close();
  tmp.cleanup();
});

describe('run with a private science bank and a grader', () => {
  let run = '';

  it('asks from the private bank, grades with the chosen grader and journals both', async () => {
    const record = fleet.agents[0]!;
    const agent: Agent = {
      subject: 'uaid:aid:perfect;uid=0;registry=self;proto=openai;nativeId=127.0.0.1',
      name: record.name,
      protocol: 'openai',
      endpoint: (record as { endpoint: string }).endpoint,
    };
    const report = await runWith(config(), {
      source: { agents: [agent] },
      topic,
      evals: ['math', 'science'],
      grader: 'last-answer@1',
      scienceBank: bankFile,
      client: h.client,
    });
    expect(report.status).toBe('complete');
    expect(report.evals.correct).toBe(2);
    run = report.run;
    const { state } = await readJournal(join(tmp.dir, 'state', 'runs', `${run}.jsonl`));
    expect(state.start.config.extra).toMatchObject({
      grader: 'last-answer@1',
      scienceBank: bankFile,
      scienceBankSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const results = [...state.signals.values()].map((s) => s.result);
    const science = results.find((r) => r.kind === 'science');
    expect(science && 'questionId' in science && science.questionId).toMatch(/^sci:astronomy:/);
    for (const r of results) expect('grader' in r && r.grader).toBe('last-answer@1');
  });

  it('refuses to resume once the bank has changed', async () => {
    writeFileSync(bankFile, JSON.stringify({ ...bank, questions: bank.questions.slice(0, 1) }));
    const report = await runWith(config(), { resume: run, client: h.client });
    expect(report.status).toBe('stopped');
    expect(report.error?.message).toMatch(/changed since the run began/);
  });
});
