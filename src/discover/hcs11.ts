/**
 * HCS-11 profile resolution: account → `/accounts/{id}` memo `hcs-11:<ref>` → profile document, and the HCS-10
 * inbound-topic ownership check (the inbound topic's memo names the account it belongs to).
 */
import { parseHcs10TopicMemo } from '../hcs10/messages.js';
import { formatHrl } from '../core/hrl.js';
import { isEntityId } from '../core/ids.js';
import { ResolveError, resolveDocument, type ResolveContext, type ResolvedDocument } from './resolve.js';
import { preview } from '../core/terminal.js';

/**
 * The profile reference in an account memo. `hcs-11:hcs://1/0.0.5`, `hcs-11:ipfs://…`, `hcs-11:https://…`; a bare
 * topic id (`hcs-11:0.0.5`, seen in one of the spec's diagrams) is read as an HCS-1 file. Null when not HCS-11.
 */
export function parseHcs11Memo(memo: string): string | null {
  const m = /^hcs-11:(\S+)$/.exec(memo.trim());
  if (!m) return null;
  const ref = m[1]!;
  return isEntityId(ref) ? formatHrl(1, ref) : ref;
}

/** The account's HCS-11 profile; null when the account has no `hcs-11:` memo. Throws ResolveError otherwise. */
export async function resolveAccountProfile(accountId: string, ctx: ResolveContext): Promise<ResolvedDocument | null> {
  const account = await ctx.mirror.getAccount(accountId, ctx.signal);
  if (account === null) throw new ResolveError(`account ${accountId} does not exist`);
  if (account.deleted) throw new ResolveError(`account ${accountId} is deleted`);
  const ref = parseHcs11Memo(account.memo);
  if (ref === null) return null;
  try {
    return await resolveDocument(ref, ctx);
  } catch (err) {
    if (err instanceof ResolveError)
      throw new ResolveError(`profile of ${accountId} (memo ${preview(account.memo, 60)}): ${err.message}`);
    throw err;
  }
}

/** The account an HCS-10 inbound topic belongs to, from its memo `hcs-10:0:{ttl}:0:{accountId}`. */
export async function inboundTopicOwner(
  topicId: string,
  ctx: ResolveContext,
): Promise<{ exists: boolean; accountId?: string }> {
  const topic = await ctx.mirror.getTopic(topicId, ctx.signal);
  if (topic === null || topic.deleted) return { exists: false };
  const memo = parseHcs10TopicMemo(topic.memo);
  return memo?.type === 'inbound' ? { exists: true, accountId: memo.accountId } : { exists: true };
}
