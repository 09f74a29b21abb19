import { bareAnswer, type Solution } from './solver.js';
import { readBody, sendJson, startHttpServer, type RunningServer } from './server.js';

/**
 * A plain-HTTP agent: `POST / {"message": "..."}` → `{"response": "..."}`. A GET answers 405, as POST-only
 * agents in the wild do (the availability probe counts that as reachable).
 */
export function startPlainHttpAgent(solve: (prompt: string) => Solution): Promise<RunningServer> {
  return startHttpServer((req, res) => {
    if (req.method !== 'POST') {
      sendJson(res, 405, { error: 'POST a JSON body {"message": "..."}' }, { allow: 'POST' });
      return;
    }
    void readBody(req)
      .then((text) => {
        const message = (JSON.parse(text) as { message?: unknown }).message;
        if (typeof message !== 'string') return sendJson(res, 400, { error: 'message must be a string' });
        return sendJson(res, 200, { response: bareAnswer(solve(message)) });
      })
      .catch(() => sendJson(res, 400, { error: 'body is not JSON' }));
  });
}
