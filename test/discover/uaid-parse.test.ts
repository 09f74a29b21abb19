import { describe, expect, it } from 'vitest';
import { parseUaid } from '../../src/discover/uaid.js';

describe('parseUaid', () => {
  it('reads the id and the routing parameters', () => {
    const parts = parseUaid('uaid:aid:abc;uid=0;registry=hol;proto=a2a;nativeId=agent.example.com');
    expect(parts).toMatchObject({
      target: 'aid',
      id: 'abc',
      registry: 'hol',
      proto: 'a2a',
      nativeId: 'agent.example.com',
    });
    expect(Object.entries(parts.params)).toEqual([
      ['uid', '0'],
      ['registry', 'hol'],
      ['proto', 'a2a'],
      ['nativeId', 'agent.example.com'],
    ]);
    expect(parseUaid('uaid:did:z6Mk')).toEqual({ target: 'did', id: 'z6Mk', params: {} });
  });

  it('never throws on hostile input', () => {
    expect(parseUaid('not-a-uaid')).toEqual({ target: null, id: 'not-a-uaid', params: {} });
    expect(parseUaid('uaid:')).toEqual({ target: null, id: 'uaid:', params: {} });
    // A repeated key keeps its first value; an empty value sets no routing field.
    const repeated = parseUaid('uaid:aid:x;proto=mcp;proto=a2a;registry=;registry=hol');
    expect(repeated.proto).toBe('mcp');
    expect(repeated.registry).toBeUndefined();
    expect(repeated.params.registry).toBe('');
    // Pieces without a key or an `=` are skipped.
    expect(Object.keys(parseUaid('uaid:aid:x;=1;novalue;;a=b=c').params)).toEqual(['a']);
    expect(parseUaid('uaid:aid:x;a=b=c').params.a).toBe('b=c');
    // `__proto__` stays a plain key.
    const proto = parseUaid('uaid:aid:x;__proto__=polluted');
    expect(Object.keys(proto.params)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    // Percent-encoding is decoded where valid and kept as written where not.
    expect(parseUaid('uaid:aid:x;nativeId=a%3Bb').nativeId).toBe('a;b');
    expect(parseUaid('uaid:aid:x;nativeId=%E0%A4%A').nativeId).toBe('%E0%A4%A');
  });
});

describe('uaidRouting', () => {
  it('reads what parseUaid reads, without the params record', async () => {
    const { parseUaid, uaidRouting } = await import('../../src/discover/uaid.js');
    for (const uaid of [
      'uaid:aid:abc;uid=0;registry=hol;proto=a2a;nativeId=agent.example.com',
      'uaid:did:z6Mk;proto=mcp;proto=a2a;registry=;registry=x;nativeId=a%3Bb',
      'uaid:aid:abc;registryx=1;protocol=2;native=3;=;x',
      'uaid:aid:only',
      'not-a-uaid',
      'uaid:aid:q;__proto__=x;nativeId=%E0%A4%A',
    ]) {
      const { params: _params, ...routing } = parseUaid(uaid);
      expect(uaidRouting(uaid)).toEqual(routing);
    }
  });
});
