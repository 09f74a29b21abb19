/**
 * Format-3 score records (`op: "score"`, `op: "scores"`): a stub until the score records are read; each is counted as
 * an op this reader does not know.
 */
import { unknownItem, type MessageItem } from './read-common.js';

export function readScoreOpsV3(value: Record<string, unknown>): MessageItem[] {
  return [unknownItem(0, 'op', value.op)];
}
