import { describe, expect, it } from 'vitest';
import * as hcs25 from '../src/index.js';
import * as devtools from '../src/devtools/index.js';
import * as localnode from '../src/localnode/index.js';

describe('package root', () => {
  it.each([
    'createHcs25Client',
    'discoverAgents',
    'evaluateAgents',
    'buildSignals',
    'publishSignals',
    'runSignals',
    'readSignals',
    'scoreSignals',
    'revealRun',
    'verifySignals',
    'checkScores',
    'checkPublishedScores',
    'createTopic',
    'describeTopic',
    'buildSignalMessage',
    'parseSignalMessage',
    'aggregateTrustScore',
    'signalMessageSchema',
    'scoreMessageSchema',
    'revealMessageSchema',
    'gradeMath',
    'gradeChoice',
    'computeScores',
    'ScoreAccumulator',
    'loadConfig',
    'Hcs25Error',
  ])('exports %s', (name) => {
    expect(typeof (hcs25 as Record<string, unknown>)[name]).not.toBe('undefined');
  });

  it('leaves the emulator and the sample agents to their own entry points (hcs25/localnode, hcs25/devtools)', () => {
    for (const name of ['startLocalNode', 'startAgentFleet', 'startHcs10Fleet', 'runDemo'])
      expect(name in hcs25, name).toBe(false);
    expect(typeof localnode.startLocalNode).toBe('function');
    expect(typeof devtools.startAgentFleet).toBe('function');
    expect(typeof devtools.startHcs10Fleet).toBe('function');
    expect(typeof devtools.runDemo).toBe('function');
  });

  it('the exported graders work', () => {
    expect(hcs25.gradeMath('The answer is **95**.', 95)).toMatchObject({
      outcome: 'correct',
      answer: '95',
      compliant: false,
    });
    expect(
      hcs25.gradeChoice('b', { options: ['Oxygen', 'Carbon dioxide', 'Nitrogen', 'Helium'], answer: 'B' }),
    ).toMatchObject({ outcome: 'correct' });
  });
});
