import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import express from 'express';
import {
  A2A_PROTOCOL_VERSION,
  AGENT_CARD_PATH,
  Role,
  TaskState,
  type AgentCard,
  type Message,
  type Part,
} from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { bareAnswer, type Solution } from './solver.js';
import { listen, type RunningServer } from './server.js';

export interface A2aAgentOptions {
  solve: (prompt: string) => Solution;
  name?: string;
  /**
   * `1.0` (default): the card declares a 1.0 and a 0.3 JSON-RPC interface and the server accepts both dialects
   * (the SDK's compat layer). `0.3`: the card declares only a 0.3 interface, like a server not yet migrated.
   */
  cardVersion?: '1.0' | '0.3';
  /** `task` (default): submitted → working → artifact → completed, like most SDK agents. `message`: one Message. */
  reply?: 'task' | 'message';
}

function textPart(value: string): Part {
  return { content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function promptOf(message: Message): string {
  return message.parts
    .map((p) => (p.content?.$case === 'text' ? p.content.value : ''))
    .join('\n')
    .trim();
}

class SolverExecutor implements AgentExecutor {
  constructor(
    private readonly solve: (prompt: string) => Solution,
    private readonly reply: 'task' | 'message',
  ) {}

  cancelTask = async (_taskId: string, _bus: ExecutionEventBus): Promise<void> => {};

  async execute(ctx: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage } = ctx;
    const answer = bareAnswer(this.solve(promptOf(userMessage)));
    const agentMessage = (text: string): Message => ({
      role: Role.ROLE_AGENT,
      messageId: randomUUID(),
      parts: [textPart(text)],
      taskId: this.reply === 'task' ? taskId : '',
      contextId,
      extensions: [],
      metadata: {},
      referenceTaskIds: [],
    });
    if (this.reply === 'message') {
      bus.publish(AgentEvent.message(agentMessage(answer)));
      bus.finished();
      return;
    }
    const now = () => new Date().toISOString();
    if (!ctx.task) {
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
          artifacts: [],
          // History echoes the question: a client that grades history would grade our prompt.
          history: [userMessage],
          metadata: undefined,
        }),
      );
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_WORKING, message: agentMessage('Working on it'), timestamp: now() },
        metadata: {},
      }),
    );
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: randomUUID(),
          name: 'answer',
          description: '',
          parts: [textPart(answer)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
    bus.finished();
  }
}

/** An A2A agent on the official `@a2a-js/sdk` server (Express, JSON-RPC, v0.3 compat enabled). */
export async function startA2aAgent(options: A2aAgentOptions): Promise<RunningServer> {
  const app = express();
  // Listen first: the card must carry the ephemeral port, and Express accepts routes added afterwards.
  const running = await listen(createServer(app));
  const cardVersion = options.cardVersion ?? '1.0';
  const card: AgentCard = {
    name: options.name ?? 'hcs25 sample calculator',
    description: 'Answers simple arithmetic and basic science questions (hcs25 sample agent).',
    // The SDK's compat layer only accepts a dialect the card declares (a header-less v0.3 request to a card with
    // only a 1.0 interface gets -32009), so a server that speaks both must list both, in preference order.
    supportedInterfaces: (cardVersion === '1.0' ? [A2A_PROTOCOL_VERSION, '0.3'] : ['0.3']).map((protocolVersion) => ({
      url: `${running.origin}/a2a/jsonrpc`,
      protocolBinding: 'JSONRPC',
      tenant: '',
      protocolVersion,
    })),
    provider: { organization: 'hcs25', url: 'https://github.com/hashgraph-online' },
    version: '0.1.0',
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [
      {
        id: 'simple-evals',
        name: 'Simple evals',
        description: 'Arithmetic and multiple-choice science',
        tags: ['math', 'science'],
        examples: ['What is 37 + 58?'],
        inputModes: ['text/plain'],
        outputModes: ['text/plain'],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
  const handler = new DefaultRequestHandler(
    card,
    new InMemoryTaskStore(),
    new SolverExecutor(options.solve, options.reply ?? 'task'),
  );
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler, legacyCompat: { enabled: true } }));
  app.use(
    '/a2a/jsonrpc',
    jsonRpcHandler({
      requestHandler: handler,
      userBuilder: UserBuilder.noAuthentication,
      legacyCompat: { enabled: true },
    }),
  );
  return running;
}
