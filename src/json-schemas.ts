import type { z } from 'zod';
import { configInputSchema } from './config/schema.js';
import { agentRecordSchema } from './discover/agent-record.js';
import { scienceBankSchema } from './evaluate/science.js';
import { revealMessageSchema, scoreMessageSchema, signalMessageSchema } from './format/schema-v1.js';
import {
  packBodySchema,
  signalMessageV2Schema,
  revealMessageV2Schema,
  scoreMessageV2Schema,
  scoresBodySchema,
} from './format/schema-v2.js';
import { FORMAT_THREE_SCHEMA_SOURCES, renderSchemas } from './format/json-schemas-v3.js';
import { readSignalV3Schema } from './format/schema-v3.js';
import { scoringConfigSchema } from './score/scoring-config.js';

/** Each checked-in JSON Schema file in `schemas/` and the zod schema it is generated from. */
const SOURCES: Readonly<Record<string, { title: string; schema: z.ZodType }>> = {
  'agent-record.schema.json': { title: 'hcs25 agent record', schema: agentRecordSchema },
  'config.schema.json': { title: 'hcs25 configuration file', schema: configInputSchema },
  'science-bank.schema.json': { title: 'SimpleScience question bank', schema: scienceBankSchema },
  'signal.schema.json': { title: 'HCS-25 signal message (v1)', schema: signalMessageSchema },
  'signal-v2.schema.json': {
    title: 'HCS-25 signal message (v2): one signal; the `none` packing mode',
    schema: signalMessageV2Schema,
  },
  'pack-v2.schema.json': {
    title:
      'HCS-25 signal pack (v2): the JSON of a `subject`-mode message, and the inflated body of a `dense`-mode (zlib, first byte 0x78) message',
    schema: packBodySchema,
  },
  'score.schema.json': { title: 'HCS-25 score message (v1)', schema: scoreMessageSchema },
  'reveal.schema.json': { title: 'HCS-25 reveal message (v1)', schema: revealMessageSchema },
  'score-v2.schema.json': {
    title: 'HCS-25 score message (v2, with a Score Explanation)',
    schema: scoreMessageV2Schema,
  },
  'scores-v2.schema.json': {
    title:
      'HCS-25 score records in one message (op "scores", v2): the JSON of a `subject`-mode message, and the inflated body of a `dense`-mode (zlib, first byte 0x78) message',
    schema: scoresBodySchema,
  },
  'reveal-v2.schema.json': { title: 'HCS-25 reveal message (v2)', schema: revealMessageV2Schema },
  'signal-read.schema.json': {
    title: 'a format-3 signal as hcs25 readers hand it on (`hcs25 signals --json`, the serve API): never on a topic',
    schema: readSignalV3Schema,
  },
  ...FORMAT_THREE_SCHEMA_SOURCES,
  'scoring-config.schema.json': {
    title: 'hcs25 scoring configuration (HCS-25 adapters, weights, windows)',
    schema: scoringConfigSchema,
  },
};

/** The JSON Schema documents, keyed by file name, rendered exactly as they are checked in. */
export function renderJsonSchemas(): Record<string, string> {
  return renderSchemas(SOURCES);
}
