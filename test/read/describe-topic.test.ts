/** What `describeTopic` makes of a memo and of a message (pure parts; test/cli/topic.test.ts runs it end to end). */
import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildRevealMessageV2 } from '../../src/format/write.js';
import { classifyMemo, messageFormat } from '../../src/read/describe-topic.js';

describe('classifyMemo', () => {
  it.each([
    ['hcs25-tool/3 hcs://1/0.0.42', 'format-3', { format: 'hcs25-tool/3', schemaFile: '0.0.42' }],
    ['hcs25-tool/3', 'format-3', { format: 'hcs25-tool/3' }],
    ['hcs25-tool/7 hcs://1/0.0.42', 'format-other', { format: 'hcs25-tool/7', schemaFile: '0.0.42' }],
    ['hcs-25:0:86400', 'old-format', { format: 'hcs-25 v1/v2', ttl: 86400 }],
    ['hcs-2:0:86400', 'hcs-2', { ttl: 86400 }],
    ['hcs-10:0:60:3', 'hcs-10', { ttl: 60 }],
    ['hcs-10:0:60:0:0.0.1001', 'hcs-10', { ttl: 60 }],
    [`${'ab'.repeat(32)}:brotli:base64`, 'hcs-1', {}],
    ['my topic', 'unknown', {}],
    ['', 'unknown', {}],
  ])('%j is %s', (memo, kind, fields) => {
    const reading = classifyMemo(memo);
    expect(reading.kind).toBe(kind);
    expect(reading).toMatchObject(fields);
    expect(reading.what.length).toBeGreaterThan(10);
  });

  it('says what a registry or an HCS-10 topic is', () => {
    expect(classifyMemo('hcs-2:1:0').what).toMatch(/^HCS-2 registry \(non-indexed\)/);
    expect(classifyMemo('hcs-10:0:60:0:0.0.1001').what).toBe('HCS-10 inbound topic of account 0.0.1001');
    expect(classifyMemo('hcs25-tool/7').what).toMatch(/does not know \(it knows hcs25-tool\/3\)/);
  });
});

describe('messageFormat', () => {
  const reveal = buildRevealMessageV2({
    run: '01JDX3V9W5Q8K6T2N4M7P1R0ZA',
    key: Buffer.alloc(32, 1).toString('base64url'),
    seed: 's',
    generator: 'simple@1',
    grader: 'first-token@1',
  }).json;

  it('names the version of what the reader reads, and says when it is not hcs-25 or malformed', () => {
    expect(messageFormat(Buffer.from(reveal))).toBe('hcs-25 v2');
    expect(messageFormat(deflateSync(Buffer.from(reveal)))).toBe('hcs-25 v2 (zlib)');
    expect(messageFormat(Buffer.from('{"p":"hcs-2","op":"register"}'))).toBe('not hcs-25');
    expect(messageFormat(Buffer.from('{"p":"hcs-25"'))).toBe('malformed (bad-json)');
    expect(messageFormat(Buffer.from('{"p":"hcs-25","v":9,"op":"signal"}'))).toBe('unknown version 9');
  });
});
