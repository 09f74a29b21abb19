/**
 * One answer-extraction function for every A2A version (digest §1.6). Agents put the answer in a Message, in
 * task artifacts, or in the task's status message; streams deliver it in pieces. History is never read for user
 * entries: it echoes the question, and grading an echo would score the agent for our own words.
 */

type Obj = Record<string, unknown>;

export interface A2aTask {
  id?: string;
  /** Normalised: `completed`, `working`, `input-required`… */
  state: string;
  artifacts: Array<{ id: string; parts: unknown[] }>;
  statusParts: unknown[];
  history: unknown[];
}

export type A2aReply = { type: 'message'; parts: unknown[] } | { type: 'task'; task: A2aTask };

const TERMINAL = new Set(['completed', 'failed', 'canceled', 'cancelled', 'rejected']);
const INTERRUPTED = new Set(['input-required', 'auth-required']);

export function isObj(v: unknown): v is Obj {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export function normaliseState(state: unknown): string {
  if (typeof state !== 'string' || state === '') return 'unknown';
  return state
    .replace(/^TASK_STATE_/i, '')
    .toLowerCase()
    .replace(/_/g, '-');
}

export function isFinished(state: string): boolean {
  return TERMINAL.has(state) || INTERRUPTED.has(state);
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

/** Text of parts: text parts joined by newlines; `data` parts serialised only when there is no text at all. */
export function partsText(parts: unknown[]): string {
  const texts: string[] = [];
  const data: string[] = [];
  for (const part of parts) {
    if (!isObj(part)) continue;
    if (typeof part.text === 'string') texts.push(part.text);
    else if (part.data !== undefined && (part.kind === 'data' || part.kind === undefined)) {
      try {
        data.push(JSON.stringify(part.data));
      } catch {
        /* unserialisable data part: skip */
      }
    }
  }
  return (texts.length > 0 ? texts : data).join('\n').trim();
}

function isAgentRole(role: unknown): boolean {
  return role === 'agent' || role === 'ROLE_AGENT';
}

function toTask(raw: Obj): A2aTask {
  const status = isObj(raw.status) ? raw.status : {};
  const statusMessage = isObj(status.message) ? status.message : undefined;
  return {
    ...(typeof raw.id === 'string' ? { id: raw.id } : {}),
    state: normaliseState(status.state),
    artifacts: arr(raw.artifacts).flatMap((a, i) =>
      isObj(a) ? [{ id: typeof a.artifactId === 'string' ? a.artifactId : `#${i}`, parts: arr(a.parts) }] : [],
    ),
    statusParts: statusMessage ? arr(statusMessage.parts) : [],
    history: arr(raw.history),
  };
}

type Event =
  | { type: 'task'; raw: Obj }
  | { type: 'message'; raw: Obj }
  | { type: 'status'; taskId?: string; status: Obj }
  | { type: 'artifact'; taskId?: string; artifact: Obj; append: boolean };

/** Classifies one `result` (v1.0 member-named wrappers, v0.3 `kind`, or untagged shapes). */
function classify(result: unknown): Event | undefined {
  if (!isObj(result)) return undefined;
  if (isObj(result.task)) return { type: 'task', raw: result.task };
  if (isObj(result.message)) return { type: 'message', raw: result.message };
  if (isObj(result.statusUpdate)) return statusEvent(result.statusUpdate);
  if (isObj(result.artifactUpdate)) return artifactEvent(result.artifactUpdate);
  switch (result.kind) {
    case 'task':
      return { type: 'task', raw: result };
    case 'message':
      return { type: 'message', raw: result };
    case 'status-update':
      return statusEvent(result);
    case 'artifact-update':
      return artifactEvent(result);
  }
  if (isObj(result.status)) return { type: 'task', raw: result };
  if (Array.isArray(result.parts)) return { type: 'message', raw: result };
  return undefined;
}

function statusEvent(u: Obj): Event | undefined {
  if (!isObj(u.status)) return undefined;
  return { type: 'status', ...(typeof u.taskId === 'string' ? { taskId: u.taskId } : {}), status: u.status };
}

function artifactEvent(u: Obj): Event | undefined {
  if (!isObj(u.artifact)) return undefined;
  return {
    type: 'artifact',
    ...(typeof u.taskId === 'string' ? { taskId: u.taskId } : {}),
    artifact: u.artifact,
    append: u.append === true,
  };
}

/**
 * Folds the results of a reply (one for plain JSON, many for a stream) into the final Message or Task:
 * status updates replace the status, artifact chunks are reassembled by artifactId (`append` concatenates).
 */
export function foldResults(results: unknown[]): A2aReply | undefined {
  let task: A2aTask | undefined;
  let message: unknown[] | undefined;
  for (const result of results) {
    const event = classify(result);
    if (!event) continue;
    switch (event.type) {
      case 'task': {
        const next = toTask(event.raw);
        // A later full Task snapshot keeps artifacts streamed earlier when it carries none itself.
        task = task && next.artifacts.length === 0 ? { ...next, artifacts: task.artifacts } : next;
        break;
      }
      case 'message':
        message = arr(event.raw.parts);
        break;
      case 'status': {
        task ??= {
          ...(event.taskId ? { id: event.taskId } : {}),
          state: 'unknown',
          artifacts: [],
          statusParts: [],
          history: [],
        };
        task.state = normaliseState(event.status.state);
        const m = isObj(event.status.message) ? event.status.message : undefined;
        task.statusParts = m ? arr(m.parts) : [];
        break;
      }
      case 'artifact': {
        task ??= {
          ...(event.taskId ? { id: event.taskId } : {}),
          state: 'working',
          artifacts: [],
          statusParts: [],
          history: [],
        };
        const id =
          typeof event.artifact.artifactId === 'string' ? event.artifact.artifactId : `#${task.artifacts.length}`;
        const parts = arr(event.artifact.parts);
        const existing = task.artifacts.find((a) => a.id === id);
        if (existing && event.append) existing.parts = [...existing.parts, ...parts];
        else if (existing) existing.parts = parts;
        else task.artifacts.push({ id, parts });
        break;
      }
    }
  }
  if (task) return { type: 'task', task };
  if (message) return { type: 'message', parts: message };
  return undefined;
}

/** The answer of a task: artifacts, else the status message, else the last agent entry in history. */
export function taskAnswer(task: A2aTask): string {
  const fromArtifacts = task.artifacts
    .map((a) => partsText(a.parts))
    .filter((t) => t !== '')
    .join('\n');
  if (fromArtifacts !== '') return fromArtifacts;
  const fromStatus = partsText(task.statusParts);
  if (fromStatus !== '') return fromStatus;
  for (let i = task.history.length - 1; i >= 0; i--) {
    const entry = task.history[i];
    if (isObj(entry) && isAgentRole(entry.role)) {
      const text = partsText(arr(entry.parts));
      if (text !== '') return text;
    }
  }
  return '';
}
