/**
 * A strict reader of the Prometheus text exposition format (0.0.4), enough to check what `/metrics` serves: every
 * line is a `# HELP`, a `# TYPE` or a sample; each metric's HELP and TYPE come once, before its samples; samples
 * parse (name, optional labels with escaped values, a float); counter names end in `_total`.
 */
export interface Exposition {
  types: Map<string, string>;
  help: Map<string, string>;
  samples: { name: string; labels: Record<string, string>; value: number }[];
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(
  `^(${NAME})(?:\\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*",?)*)\\})? (\\S+)(?: -?\\d+)?$`,
);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"/g;
const FLOAT = /^(?:[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$/;

export function parseExposition(text: string): Exposition {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const out: Exposition = { types: new Map(), help: new Map(), samples: [] };
  const seenSamples = new Set<string>();
  for (const [i, line] of text.slice(0, -1).split('\n').entries()) {
    const where = `line ${i + 1}: ${line}`;
    if (line.startsWith('# HELP ')) {
      const m = new RegExp(`^# HELP (${NAME}) (.*)$`).exec(line);
      if (!m || out.help.has(m[1]!)) throw new Error(`bad or repeated HELP at ${where}`);
      if (seenSamples.has(m[1]!)) throw new Error(`HELP after samples at ${where}`);
      out.help.set(m[1]!, m[2]!);
    } else if (line.startsWith('# TYPE ')) {
      const m = new RegExp(`^# TYPE (${NAME}) (counter|gauge|histogram|summary|untyped)$`).exec(line);
      if (!m || out.types.has(m[1]!)) throw new Error(`bad or repeated TYPE at ${where}`);
      if (seenSamples.has(m[1]!)) throw new Error(`TYPE after samples at ${where}`);
      if (m[2] === 'counter' && !m[1]!.endsWith('_total')) throw new Error(`counter without _total at ${where}`);
      out.types.set(m[1]!, m[2]!);
    } else if (line.startsWith('#') || line.trim() === '') {
      throw new Error(`unexpected line at ${where}`);
    } else {
      const m = SAMPLE.exec(line);
      if (!m || !FLOAT.test(m[3]!)) throw new Error(`bad sample at ${where}`);
      const name = m[1]!;
      if (!out.types.has(name)) throw new Error(`sample without TYPE at ${where}`);
      const labels: Record<string, string> = {};
      for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!;
      seenSamples.add(name);
      out.samples.push({ name, labels, value: Number(m[3]) });
    }
  }
  return out;
}
