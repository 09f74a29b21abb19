/**
 * Local files hcs25 reads (agents files, names files) come as one JSON document or as JSON lines, one value per line
 * (`hcs25 agents` and `signals --jsonl` write lines): the one parser for both.
 */

/**
 * The JSON document `text` holds, or — when it is not one — the values of its non-empty lines. A line that is not
 * JSON is reported through `badLine` (1-based line number), whose error is thrown.
 */
export function parseJsonOrLines(text: string, badLine: (line: number, cause: unknown) => Error): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // not one document: JSON lines
  }
  const values: unknown[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      values.push(JSON.parse(line));
    } catch (err) {
      throw badLine(i + 1, err);
    }
  });
  return values;
}
