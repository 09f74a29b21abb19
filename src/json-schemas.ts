import { z } from 'zod';
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
import {
  readSignalV3Schema,
  revealMessageV3Schema,
  signalsMessageV3Schema,
  zlibMessageV3Schema,
} from './format/schema-v3.js';
import { scoringConfigSchema } from './score/scoring-config.js';

const BASE_ID = 'https://github.com/hcs25/hcs25/schemas/';

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
  'signals-3.schema.json': {
    title:
      'hcs25 format 3 signals (op "signals"): one signal, one subject or many; also the inflated body of an op "zlib" message',
    schema: signalsMessageV3Schema,
  },
  'zlib-3.schema.json': {
    title: 'hcs25 format 3 compressed message (op "zlib"): base64 of a zlib stream of one format-3 message',
    schema: zlibMessageV3Schema,
  },
  'reveal-3.schema.json': { title: 'hcs25 format 3 reveal (op "reveal")', schema: revealMessageV3Schema },
  'signal-read-3.schema.json': {
    title: 'a format-3 signal as hcs25 readers hand it on (`hcs25 signals --json`, the serve API): never on a topic',
    schema: readSignalV3Schema,
  },
  'scoring-config.schema.json': {
    title: 'hcs25 scoring configuration (HCS-25 adapters, weights, windows)',
    schema: scoringConfigSchema,
  },
};

/** The JSON Schema documents, keyed by file name, rendered exactly as they are checked in. */
export function renderJsonSchemas(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, { title, schema }] of Object.entries(SOURCES).sort(([a], [b]) => a.localeCompare(b))) {
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' });
    out[file] = `${JSON.stringify({ $id: `${BASE_ID}${file}`, title, ...json }, null, 2)}\n`;
  }
  return out;
}
