import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseUaid, type UaidParts } from '../../src/registry/uaid.js';

/** parseUaid as it was written first (regex and split): the reference for the scanning version. */
function reference(uaid: string): UaidParts {
  const prefix = /^uaid:(aid|did):/.exec(uaid);
  if (!prefix) return { target: null, id: uaid, params: {} };
  const [id = '', ...pairs] = uaid.slice(prefix[0].length).split(';');
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const key = pair.slice(0, eq);
    if (!(key in params)) params[key] = decodeValueRef(pair.slice(eq + 1));
  }
  const parts: UaidParts = { target: prefix[1] as 'aid' | 'did', id, params };
  if (params.registry) parts.registry = params.registry;
  if (params.proto) parts.proto = params.proto;
  if (params.nativeId) parts.nativeId = params.nativeId;
  return parts;
}

function decodeValueRef(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

describe('parseUaid', () => {
  it('parses as the regex-and-split reference does, hostile input included', () => {
    const piece = fc.constantFrom('uaid:aid:', 'uaid:did:', 'uaid:', 'aid', ';', '=', '==', 'registry', 'proto', 'nativeId', 'hol', 'a2a', '%41', '%E0', '__proto__', 'x', '');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 14 }), (pieces) => {
        const uaid = pieces.join('');
        const got = parseUaid(uaid);
        const want = reference(uaid);
        expect(got).toEqual(want);
        expect(Object.entries(got.params)).toEqual(Object.entries(want.params));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('uaidRouting', () => {
  it('reads what parseUaid reads, without the params record', async () => {
    const { parseUaid, uaidRouting } = await import('../../src/registry/uaid.js');
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
