import { describe, expect, it } from 'vitest';
import { RegistryCitations } from '../../src/read/resolve-names.js';
import type { ReadSignal } from '../../src/read/types.js';

const signal = (subject: string, sources?: string[]) =>
  ({ message: { subject, ...(sources && { sources }) } }) as unknown as ReadSignal;

describe('RegistryCitations', () => {
  it('gathers the HCS-2/HCS-10 registries signals cite, with their subjects, in first-cited order, one signal at a time', () => {
    const citations = new RegistryCitations();
    for (const s of [
      signal('s1', ['hcs://10/0.0.7', 'hcs://2/0.0.5']),
      signal('s2', ['HCS://2/0.0.5/', 'hcs://1/0.0.9', 'https://example.com', 'hcs://2/not-an-id']),
      signal('s3'),
      signal('s1', ['hcs://2/0.0.5']),
    ]) {
      citations.add(s);
    }
    expect([...citations.bySource].map(([source, subjects]) => [source, [...subjects]])).toEqual([
      ['hcs://2/0.0.7', ['s1']],
      ['hcs://2/0.0.5', ['s1', 's2']],
    ]);
  });

  it('of(signals) gives what adding them one by one gives', () => {
    const signals = [signal('a', ['hcs://2/0.0.5']), signal('b', ['hcs://2/0.0.6', 'hcs://2/0.0.5'])];
    const one = new RegistryCitations();
    for (const s of signals) one.add(s);
    expect(RegistryCitations.of(signals).bySource).toEqual(one.bySource);
  });
});
