/**
 * The watcher's one view of the registry: every live agent by subject, with the registry sequence of the message
 * that last changed it (the watch state's cursor is saved before the earliest agent still waiting to be asked).
 */
import type { Agent } from '../core/agent.js';

interface Known {
  agent: Agent;
  changedSeq: number | undefined;
}

export class RegistryAgents {
  private readonly bySubject = new Map<string, Known>();

  get size(): number {
    return this.bySubject.size;
  }

  has(subject: string): boolean {
    return this.bySubject.has(subject);
  }

  get(subject: string): Agent | undefined {
    return this.bySubject.get(subject)?.agent;
  }

  /** The registry sequence of the message that last changed `subject`'s agent. */
  changedSeq(subject: string): number | undefined {
    return this.bySubject.get(subject)?.changedSeq;
  }

  /** Adds or replaces `agent` (keyed by its subject). `changedSeq`: the message that changed it. */
  set(agent: Agent, changedSeq?: number): void {
    this.bySubject.set(agent.subject, { agent, changedSeq });
  }

  delete(subject: string): boolean {
    return this.bySubject.delete(subject);
  }

  keys(): IterableIterator<string> {
    return this.bySubject.keys();
  }

  *values(): IterableIterator<Agent> {
    for (const k of this.bySubject.values()) yield k.agent;
  }
}
