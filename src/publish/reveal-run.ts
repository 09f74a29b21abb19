/**
 * `hcs25 reveal`: publishes what re-derives a run's questions (`op: "reveal"`: key, seed, generator, grader and
 * science bank digest) so anyone can check its signals; format 3 for a format-3 run, v2 for a run begun before. It goes through the same journal and submitter as the
 * signals, under the key `reveal|<topic>`, so running it twice (or after a crash) never puts it on the topic twice.
 */
import type { Hcs25Client } from '../client.js';
import { UsageError } from '../core/errors.js';
import { QUESTION_GENERATOR, scienceBankDigest } from '../evaluate/generator.js';
import { parsePrivateKey } from '../hedera/client.js';
import { runQuestionSource } from './grading.js';
import { Journal, revealKey, runFormat, signalReceipt, type RunState } from './journal.js';
import { operatorSigner } from './signer.js';
import { Submitter } from './submitter.js';
import { decodeRunKey, encodeRunKey } from '../format/hashing.js';
import { buildRevealMessageV2 } from '../format/write.js';
import { buildRevealMessageV3 } from '../format/write-v3.js';
import type { RevealMessageV2 } from '../format/schema-v2.js';
import { TRANSACTION_MEMOS_V3, type RevealMessageV3 } from '../format/schema-v3.js';
import { type BuiltMessage, TRANSACTION_MEMOS } from '../format/protocol.js';

export interface RevealRunParameters {
  run: string;
  /** Default: the run's signal topic. */
  topic?: string;
  /** Reveal although the run has not finished (its later signals could then be answered with the key known). */
  force?: boolean;
  /**
   * The run's state as its publisher left it, when this process has just published the run (`hcs25 watch`): the
   * journal is then appended to without being read again.
   */
  state?: RunState;
}

export interface RevealRunReturnType {
  run: string;
  topic: string;
  txId: string;
  seq: number;
  /** Already revealed to this topic earlier; nothing new was sent. */
  already: boolean;
}

export async function revealRun(client: Hcs25Client, options: RevealRunParameters): Promise<RevealRunReturnType> {
  const { config } = client;
  const operator = client.requireOperator();
  const reopened = options.state && (await Journal.reopen(config.stateDir, options.run));
  const { journal, state } = reopened
    ? { journal: reopened, state: options.state! }
    : await Journal.open(config.stateDir, options.run);
  try {
    // Topic ids are per network: the same id elsewhere is another topic, or none.
    if (state.start.config.network !== config.network.ledger) {
      throw new UsageError(`run ${options.run} ran on ${state.start.config.network}, not ${config.network.ledger}`, {
        hint: `pass --network ${state.start.config.network}`,
      });
    }
    const topic = options.topic ?? state.start.topic;
    const done = state.reveals.get(topic)?.receipt;
    if (done) return { run: options.run, topic, txId: done.txId, seq: done.seq, already: true };
    const unfinished = [...state.signals.values()].some((s) => s.message && !signalReceipt(state, s));
    if ((state.end?.status !== 'complete' || unfinished) && !options.force) {
      throw new UsageError(
        `run ${options.run} has not finished publishing (${state.end ? state.end.status : 'no end record'})`,
        {
          hint: `finish it with \`hcs25 run --resume ${options.run}\` first, or pass --force to reveal anyway`,
        },
      );
    }
    if (
      state.start.config.operator &&
      state.start.config.operator !== operator.accountId &&
      (state.reveals.get(topic)?.txIds.length ?? 0) > 0
    ) {
      throw new UsageError(`an earlier reveal of run ${options.run} was paid by ${state.start.config.operator}`, {
        hint: 'reveal with the same operator account',
      });
    }
    const message = revealMessageFor(state);
    const submitter = new Submitter({
      client: await client.connect(),
      signer: operatorSigner(parsePrivateKey(operator)),
      operatorId: operator.accountId,
      topicId: topic,
      journal,
      memo: runFormat(state.start.config) === 3 ? TRANSACTION_MEMOS_V3.reveal : TRANSACTION_MEMOS.reveal,
      mirror: client.mirror,
      window: 1,
    });
    const key = revealKey(topic);
    const outcome = await submitter.submit({
      key,
      message: message.json,
      prior: state.reveals.get(topic)?.txIds ?? [],
    });
    if (outcome.status !== 'confirmed')
      throw submitter.fatal ?? new UsageError(`the reveal was not published: ${outcome.reason}`);
    return { run: options.run, topic, txId: outcome.txId, seq: outcome.seq, already: false };
  } finally {
    await journal.close().catch(() => undefined);
  }
}

/**
 * The reveal of a journaled run, in its format (format 3, or v2 for runs begun in v1 or v2). A private bank is
 * published by digest only, never by path or content.
 */
export function revealMessageFor(state: RunState): BuiltMessage<RevealMessageV2 | RevealMessageV3> {
  const source = runQuestionSource(state.start.config);
  const build = runFormat(state.start.config) === 3 ? buildRevealMessageV3 : buildRevealMessageV2;
  return build({
    run: state.start.run,
    key: encodeRunKey(decodeRunKey(state.start.runKey)),
    seed: state.start.seed,
    generator: QUESTION_GENERATOR,
    grader: source.grader,
    ...(source.bank ? { bank: { id: source.bank.id, digest: scienceBankDigest(source.bank.entries) } } : {}),
  });
}
