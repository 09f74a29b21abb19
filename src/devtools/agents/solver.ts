/**
 * What the "perfect" sample agents know: arithmetic computed from the prompt, and the science bank looked up by
 * its stem. Other behaviours derive their answers from this one (verbose wraps it, wrong perturbs it).
 */

/** The bank facts the solver needs: a question's stem and the text of its correct option. */
export interface KnownScienceFact {
  stem: string;
  answerText: string;
}

export type Solution =
  | { kind: 'math'; value: number }
  | { kind: 'science'; letter: string; options: string[] }
  | { kind: 'unknown' };

const MATH_RE = /(-?\d+)\s*([+\-−×x*÷/])\s*(-?\d+)\s*(?:=\s*)?\??/g;
const OPTION_RE = /^\s*([A-D])[).:]\s+(.+?)\s*$/gm;

function normalise(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ').trim();
}

function compute(a: number, op: string, b: number): number | undefined {
  switch (op) {
    case '+':
      return a + b;
    case '-':
    case '−':
      return a - b;
    case '×':
    case 'x':
    case '*':
      return a * b;
    case '÷':
    case '/':
      return b === 0 ? undefined : a / b;
  }
  return undefined;
}

export function createSolver(facts: readonly KnownScienceFact[]): (prompt: string) => Solution {
  const byStem = facts.map((f) => ({ stem: normalise(f.stem), answer: normalise(f.answerText) }));
  return (prompt) => {
    const options = [...prompt.matchAll(OPTION_RE)].map((m) => ({ letter: m[1]!, text: m[2]! }));
    if (options.length >= 2) {
      const flat = normalise(prompt);
      const fact = byStem.find((f) => flat.includes(f.stem));
      const hit = fact ? options.find((o) => normalise(o.text) === fact.answer) : undefined;
      // Unknown question: a fixed guess, like a model that does not know.
      return { kind: 'science', letter: hit?.letter ?? options[0]!.letter, options: options.map((o) => o.letter) };
    }
    const matches = [...prompt.matchAll(MATH_RE)];
    const last = matches[matches.length - 1];
    if (last) {
      const value = compute(Number(last[1]), last[2]!, Number(last[3]));
      if (value !== undefined) return { kind: 'math', value };
    }
    return { kind: 'unknown' };
  };
}

/** The bare answer a perfectly compliant agent gives. */
export function bareAnswer(solution: Solution): string {
  if (solution.kind === 'math') return String(solution.value);
  if (solution.kind === 'science') return solution.letter;
  return "I don't know.";
}

/** A deliberately wrong answer of the right form. */
export function wrongAnswer(solution: Solution): string {
  if (solution.kind === 'math') return String(solution.value + 1);
  if (solution.kind === 'science') {
    const i = solution.options.indexOf(solution.letter);
    return solution.options[(i + 1) % solution.options.length] ?? 'A';
  }
  return '42';
}
