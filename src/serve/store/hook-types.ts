/**
 * The webhook part of the serve store (migration 009): registered hooks, the delivery queue and its log, and the
 * comparison of rescored subjects with what the alerting saw of them last. Implemented in store/hooks.ts.
 */
import type { Page, PageOptions } from './paging.js';

export const HOOK_EVENTS = ['score-crossed', 'availability-changed'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

export type HookDeliveryState = 'pending' | 'delivered' | 'failed';

/** What a hook asks for, as registered. */
export interface HookDefinition {
  url: string;
  events: HookEvent[];
  /** Score thresholds (0-100, ascending) for `score-crossed`; null without it. */
  thresholds: number[] | null;
  /** Only these subjects; null: every subject. */
  subjects: string[] | null;
  /** Only this topic; null: every followed topic. */
  topic: string | null;
}

export interface StoredHook extends HookDefinition {
  id: string;
  createdAt: string;
}

/** A hook with its signing key: only the firing and the delivery see it. */
export interface SecretHook extends StoredHook {
  secret: string;
}

export type HookDeliveryCounts = Record<HookDeliveryState, number>;

/** One attempt of one delivery: a line of a hook's delivery log. */
export interface HookAttempt {
  delivery: string;
  event: HookEvent;
  topic: string;
  subject: string;
  /** 1 for the first try. */
  attempt: number;
  at: string;
  /** The receiver's HTTP status, or null when there was no answer (then `error` says why). */
  status: number | null;
  error: string | null;
  ok: boolean;
  /** Where the delivery stands now (after this and any later attempt). */
  state: HookDeliveryState;
}

/** A rescored subject as the alerting compares it: what it saw last (null: unknown) and what is true now. */
export interface SubjectChange {
  topic: string;
  subject: string;
  revision: number;
  previousTotal: number | null;
  total: number | null;
  previousReachable: boolean | null;
  reachable: boolean | null;
}

/** A delivery to queue: its body is fixed now, so every attempt sends (and signs) the same bytes. */
export interface QueuedDelivery {
  id: string;
  hook: string;
  event: HookEvent;
  topic: string;
  subject: string;
  body: string;
}

export interface DueDelivery {
  /** The queue's own key (recordHookAttempt takes it). */
  n: number;
  id: string;
  hook: string;
  url: string;
  secret: string;
  event: HookEvent;
  body: string;
  /** Attempts made so far. */
  attempts: number;
}

export interface HookAttemptResult {
  /** 1 for the first try. */
  attempt: number;
  at: Date;
  status: number | null;
  error: string | null;
  ok: boolean;
  /** When to try again; null after the last attempt (a failure then is final). */
  nextAt: Date | null;
}

export interface HookStore {
  createHook(hook: HookDefinition & { id: string; secret: string; createdAt: Date }): Promise<StoredHook>;
  hookCount(): Promise<number>;
  /** Hooks, oldest first. */
  hooks(page?: PageOptions): Promise<Page<StoredHook>>;
  hook(id: string): Promise<(StoredHook & { deliveries: HookDeliveryCounts }) | null>;
  /** Removes the hook, its queue and its log; false when there was none. */
  deleteHook(id: string): Promise<boolean>;
  /** The delivery log, newest attempt first. */
  hookAttempts(id: string, page?: PageOptions): Promise<Page<HookAttempt>>;
  /**
   * One transaction: the subjects rescored since the last call (up to about `limit`, whole revisions), compared with
   * what was seen of them last; `plan` turns the changes into deliveries for the hooks given, which are queued due
   * `now`; what is seen now is kept for the next comparison. Call again while `more`.
   */
  queueHookDeliveries(
    plan: (changes: readonly SubjectChange[], hooks: readonly StoredHook[]) => QueuedDelivery[],
    options: { now: Date; limit?: number },
  ): Promise<{ changes: number; queued: number; more: boolean }>;
  /** Pending deliveries due at `now`, the earliest first. */
  dueHookDeliveries(now: Date, limit: number): Promise<DueDelivery[]>;
  /** Logs an attempt and moves the delivery on: delivered, failed (no next attempt), or pending until `nextAt`. */
  recordHookAttempt(n: number, result: HookAttemptResult): Promise<void>;
  /** When the earliest pending delivery is due, or null when none is pending. */
  nextHookDelivery(): Promise<Date | null>;
  /** Removes finished deliveries (and their log) created before `before`; returns how many. */
  pruneHookDeliveries(before: Date): Promise<number>;
}
