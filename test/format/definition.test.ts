/** The format-3 definition file and the signal-topic memos that point to it (pure parts). */
import { describe, expect, it } from 'vitest';
import { assembleHcs1, encodeHcs1File, parseHcs1Memo } from '../../src/hedera/hcs1.js';
import { renderJsonSchemas } from '../../src/json-schemas.js';
import {
  FORMAT_DOCS_URL,
  formatDefinition,
  formatDefinitionBytes,
  formatThreeSchemas,
  parseFormatDefinition,
} from '../../src/format/definition.js';
import {
  MAX_TOPIC_MEMO_BYTES,
  checkTopicMemo,
  formatThreeTopicMemo,
  isSignalTopicMemo,
  parseSignalTopicMemo,
} from '../../src/publish/topic.js';

describe('formatThreeSchemas', () => {
  it('takes every rendered -3.schema.json file, keyed by op, and nothing else', () => {
    const rendered = {
      'signals-3.schema.json': '{"title":"signals","type":"object"}\n',
      'zlib-3.schema.json': '{"title":"zlib"}\n',
      'signal-v2.schema.json': '{"title":"v2"}\n',
      'config.schema.json': '{}\n',
      'x-30.schema.json': '{}\n',
    };
    expect(formatThreeSchemas(rendered)).toEqual({
      signals: { title: 'signals', type: 'object' },
      zlib: { title: 'zlib' },
    });
  });

  it('by default is exactly what renderJsonSchemas renders for format 3', () => {
    const expected = Object.entries(renderJsonSchemas())
      .filter(([file]) => /-3\.schema\.json$/.test(file))
      .map(([file, text]) => [file.replace(/-3\.schema\.json$/, ''), JSON.parse(text)]);
    expect(formatThreeSchemas()).toEqual(Object.fromEntries(expected));
  });
});

describe('the definition file', () => {
  it('survives an HCS-1 round trip and parses back to the same document', () => {
    const definition = formatDefinition({
      signals: { type: 'object', properties: { fmt: { const: 'hcs25-tool/3' } } },
    });
    expect(definition).toMatchObject({ format: 'hcs25-tool/3', docs: FORMAT_DOCS_URL });
    const encoded = encodeHcs1File(formatDefinitionBytes(definition), 'application/json', 40);
    expect(encoded.messages.length).toBeGreaterThan(1);
    const chunks = new Map(
      encoded.messages.map((m) => JSON.parse(m) as { o: number; c: string }).map((c) => [c.o, c.c]),
    );
    const file = assembleHcs1(parseHcs1Memo(encoded.memo)!, chunks);
    expect(file.mimeType).toBe('application/json');
    expect(parseFormatDefinition(file.bytes, 'file')).toEqual(definition);
  });

  it('refuses what is not a definition, naming the file', () => {
    expect(() => parseFormatDefinition(Buffer.from('not json'), 'HCS-1 file hcs://1/0.0.9')).toThrow(
      /HCS-1 file hcs:\/\/1\/0\.0\.9 is not JSON/,
    );
    expect(() => parseFormatDefinition(Buffer.from('{"format":"hcs25-tool/3"}'), 'f')).toThrow(
      /f is not a format definition \(schemas: /,
    );
    expect(() => parseFormatDefinition(Buffer.from('{"format":"x","schemas":{"a":1}}'), 'f')).toThrow(/schemas\.a/);
  });
});

describe('signal-topic memos', () => {
  it('reads format-3 memos with and without a schema file, future versions and the old form', () => {
    expect(parseSignalTopicMemo('hcs25-tool/3 hcs://1/0.0.1234')).toEqual({
      form: 'hcs25-tool',
      version: 3,
      schemaFile: '0.0.1234',
    });
    expect(parseSignalTopicMemo('hcs25-tool/3')).toEqual({ form: 'hcs25-tool', version: 3 });
    expect(parseSignalTopicMemo('hcs25-tool/4 something-else')).toEqual({ form: 'hcs25-tool', version: 4 });
    expect(parseSignalTopicMemo('hcs25-tool/3 hcs://2/0.0.5')).toEqual({ form: 'hcs25-tool', version: 3 });
    expect(parseSignalTopicMemo('hcs-25:0:86400')).toEqual({ form: 'hcs-25', ttl: 86400 });
    for (const memo of ['hcs-2:0:86400', 'hcs25-tool/', 'hcs25-tool/3  hcs://1/0.0.1', 'HCS25-tool/3', ''])
      expect(parseSignalTopicMemo(memo), memo).toBeNull();
  });

  it('publishes to format-3 and old-form topics only', () => {
    expect(isSignalTopicMemo(formatThreeTopicMemo('0.0.77'))).toBe(true);
    expect(isSignalTopicMemo(formatThreeTopicMemo())).toBe(true);
    expect(isSignalTopicMemo('hcs-25:0:3600')).toBe(true);
    expect(isSignalTopicMemo('hcs25-tool/4')).toBe(false);
    expect(isSignalTopicMemo('hcs-10:0:60:3')).toBe(false);
    expect(formatThreeTopicMemo('0.0.77')).toBe('hcs25-tool/3 hcs://1/0.0.77');
  });

  it('the longest format-3 memo fits; a longer memo is refused with a hint', () => {
    const longest = formatThreeTopicMemo(`${'9'.repeat(19)}.${'9'.repeat(19)}.${'9'.repeat(19)}`);
    expect(Buffer.byteLength(longest)).toBeLessThanOrEqual(MAX_TOPIC_MEMO_BYTES);
    expect(() => checkTopicMemo(longest)).not.toThrow();
    expect(() => checkTopicMemo('é'.repeat(51))).toThrow(/the topic memo is 102 bytes; Hedera allows 100/);
  });
});
