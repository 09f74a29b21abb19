import { describe, expect, it } from 'vitest';
import * as hcs25 from '../src/index.js';

describe('package root', () => {
  it.each([
    'buildSignalMessage',
    'parseSignalMessage',
    'aggregateTrustScore',
    'signalMessageSchema',
    'scoreMessageSchema',
    'revealMessageSchema',
    'gradeMath',
    'gradeChoice',
    'discoverAgents',
    'evaluateAgents',
    'runSignals',
    'readSignals',
    'computeScores',
    'startLocalNode',
    'loadConfig',
  ])('exports %s', (name) => {
    expect(typeof (hcs25 as Record<string, unknown>)[name]).not.toBe('undefined');
  });

  it('the exported graders work', () => {
    expect(hcs25.gradeMath('The answer is **95**.', 95)).toMatchObject({ outcome: 'correct', answer: '95', compliant: false });
    expect(hcs25.gradeChoice('b', { options: ['Oxygen', 'Carbon dioxide', 'Nitrogen', 'Helium'], answer: 'B' })).toMatchObject({ outcome: 'correct' });
  });
});
