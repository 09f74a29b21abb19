import { describe, expect, it } from 'vitest';
import { isSignalTopicMemo } from '../../src/publish/topic.js';

describe('isSignalTopicMemo', () => {
  it('takes the format-3 memo and the older HCS-25 one, and nothing else', () => {
    expect(isSignalTopicMemo('hcs25-tool/3 hcs://1/0.0.4321')).toBe(true);
    expect(isSignalTopicMemo('hcs25-tool/3')).toBe(true);
    expect(isSignalTopicMemo('hcs-25:0:86400')).toBe(true);
    expect(isSignalTopicMemo('hcs25-tool/3 hcs://2/0.0.4321')).toBe(false);
    expect(isSignalTopicMemo('hcs25-tool/4 hcs://1/0.0.4321')).toBe(false);
    expect(isSignalTopicMemo('hcs-2:0:86400')).toBe(false);
  });
});
