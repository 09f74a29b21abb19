/**
 * Which of an agent's messages on a connection is the reply to our question. HCS-10 has no reply field, and agents
 * built with the standards-sdk talk before they answer: they greet on a new connection ("Hello! I'm Bob…", memo
 * "Greeting message after connection established"), tag replies (`[Reply to #12] 32`, memo "Bob response to message
 * #12"), and on a public network the greeting can reach consensus after our question. Pure; no network.
 */

/** What one of the agent's messages after our question is, for the question with sequence number `questionSeq`. */
export type AgentMessageKind =
  /** The reply to our question: tagged with its sequence number, or the agent's first untagged word after it. */
  | 'answer'
  /** Tagged as the reply to another message (a late answer to an earlier question). */
  | 'other-reply'
  /** The agent's hello on a new connection. */
  | 'greeting'
  /** A status notice ("typing", "working on it"), not an answer. */
  | 'system'
  /** Untagged talk from an agent that tags its replies. */
  | 'chatter';

export interface AgentMessageContext {
  /** Sequence number of our question on the connection topic. */
  questionSeq: number;
  /** The agent has not said anything on this connection before this message. */
  firstFromAgent: boolean;
  /** The agent has tagged a reply (`[Reply to #N]`, memo "response to message #N") on this connection. */
  tagsReplies: boolean;
}

export interface ClassifiedMessage {
  kind: AgentMessageKind;
  /** The text without its reply tag. */
  text: string;
  /** The sequence number it says it replies to, when tagged. */
  repliesTo?: number;
}

/** `[Reply to #12]`, `[reply to #12]:`, `[Re: #12]`, `Reply to #12:` at the start of the text. */
const TEXT_TAG = /^\s*(?:\[\s*(?:reply\s+to|re:?)\s*#\s*(\d{1,15})\s*\]|reply\s+to\s+#\s*(\d{1,15})\s*:)\s*:?\s*/i;
/** The SDK's memo of a reply: "Bob response to message #12", or "reply to #12". */
const MEMO_TAG = /\b(?:response|reply|answer)\s+to\s+(?:message\s+)?#\s*(\d{1,15})\b/i;
const GREETING_MEMO = /\bgreeting\b|\bwelcome\b|\bconnection\s+(?:established|accepted|confirmed|created)\b/i;
const GREETING_TEXT =
  /^[\s\p{P}\p{S}]*(?:hello|hi|hey|hiya|howdy|greetings|welcome|good\s+(?:morning|afternoon|evening|day))\b/iu;
const SYSTEM_MEMO = /^\s*(?:system|status|notice|typing)\b/i;
const SYSTEM_TYPES: ReadonlySet<string> = new Set(['system', 'status', 'notice', 'typing', 'ack', 'event', 'progress']);

/** The reply tag of a message, if any: the sequence number it answers and the text without the tag. */
export function replyTagOf(text: string, memo?: string): { seq: number; text: string } | undefined {
  const tag = TEXT_TAG.exec(text);
  if (tag) return { seq: Number(tag[1] ?? tag[2]), text: text.slice(tag[0].length) };
  const fromMemo = memo === undefined ? null : MEMO_TAG.exec(memo);
  if (fromMemo) return { seq: Number(fromMemo[1]), text };
  return undefined;
}

/** A JSON status object (`{"type":"typing"}`, `{"role":"system",…}`) or a memo that says it is one. */
export function isSystemNotice(text: string, memo?: string): boolean {
  if (memo !== undefined && SYSTEM_MEMO.test(memo)) return true;
  const trimmed = text.trim();
  if (!trimmed.startsWith('{')) return false;
  try {
    const doc = JSON.parse(trimmed) as unknown;
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) return false;
    const { type, role, kind } = doc as Record<string, unknown>;
    return [type, role, kind].some((v) => typeof v === 'string' && SYSTEM_TYPES.has(v.toLowerCase()));
  } catch {
    return false;
  }
}

/** A hello: by its memo (the SDK's "Greeting message after connection established") or its first word. */
export function isGreeting(text: string, memo?: string): boolean {
  return (memo !== undefined && GREETING_MEMO.test(memo)) || GREETING_TEXT.test(text);
}

/**
 * Sorts one of the agent's messages that reached consensus after our question. A tag decides when present; an
 * untagged greeting counts only as the agent's first word on the connection (an answer may well begin "Hi,"
 * later on); from an agent that tags its replies, untagged messages are never the answer.
 */
export function classifyAgentMessage(
  text: string,
  memo: string | undefined,
  context: AgentMessageContext,
): ClassifiedMessage {
  const tag = replyTagOf(text, memo);
  if (tag) {
    return { kind: tag.seq === context.questionSeq ? 'answer' : 'other-reply', text: tag.text, repliesTo: tag.seq };
  }
  if (isSystemNotice(text, memo)) return { kind: 'system', text };
  if (context.firstFromAgent && isGreeting(text, memo)) return { kind: 'greeting', text };
  if (context.tagsReplies) return { kind: 'chatter', text };
  return { kind: 'answer', text };
}
