/**
 * Reading format-3 score records: op `score` is one record, op `scores` a batch whose record k is the op `score`
 * record with the batch's shared fields merged under its own (score-v3.ts). Each record is validated as op `score`;
 * a malformed batch or record rejects the message (read.ts turns the Malformed into a rejection). What the builder
 * left out as a default is put back, so a consumer gets the reference's shape whole.
 */
import { validate, type MessageItem } from './read-common.js';
import { expandScoresV3, scoreMessageV3Schema, scoresMessageV3Schema, withScoreDefaultsV3 } from './score-v3.js';

const VERSION = 3;

export function readScoreOpsV3(value: Record<string, unknown>): MessageItem[] {
  if (value.op === 'score') {
    const message = withScoreDefaultsV3(validate(scoreMessageV3Schema, value, ''));
    return [{ kind: 'score', index: 0, v: VERSION, message, validated: true }];
  }
  const batch = validate(scoresMessageV3Schema, value, '');
  return expandScoresV3(batch).map((record, index) => ({
    kind: 'score',
    index,
    v: VERSION,
    message: withScoreDefaultsV3(validate(scoreMessageV3Schema, record, `record ${index}: `)),
    validated: true,
  }));
}
