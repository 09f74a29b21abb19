/** "Did you mean …?" for a mistyped name: the one place the CLI and the config loader guess what a user meant. */

/** The names that the input most likely meant: those it begins, else those one or two edits away. */
export function similarNames(input: string, names: readonly string[]): string[] {
  const prefixed = names.filter((name) => name.startsWith(input) && name !== input);
  if (input.length >= 3 && prefixed.length > 0) return prefixed;
  const limit = input.length < 5 ? 1 : 2;
  let best = limit + 1;
  let out: string[] = [];
  for (const name of names) {
    const d = editDistance(input.toLowerCase(), name.toLowerCase());
    if (d < best) [best, out] = [d, [name]];
    else if (d === best) out.push(name);
  }
  return best <= limit ? out : [];
}

/** `did you mean x?`, `did you mean one of x, y?`, or an empty string when nothing is close. */
export function didYouMean(input: string, names: readonly string[]): string {
  const similar = similarNames(input, names);
  if (similar.length === 0) return '';
  return similar.length === 1 ? `did you mean ${similar[0]}?` : `did you mean one of ${similar.join(', ')}?`;
}

/** Levenshtein distance (insertions, deletions, substitutions). */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++)
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}
