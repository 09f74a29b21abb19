import { ConfigError } from '../../core/errors.js';
import type { Agent } from '../../core/agent.js';

/**
 * Per-agent request headers (API keys for agents that need one), as in the config's `agentHeaders`:
 * `{"<subject UAID | endpoint origin | host name>": {"Authorization": "ENV_VAR_NAME"}}`. The config names
 * environment variables, never values, so secrets stay out of config files; and headers come only from the
 * operator's config, never from a registry entry.
 *
 * Keys are matched against the subject, the endpoint's origin or its host — deliberately not the agent's display
 * name: names come from the (untrusted) registry, and any entry could take a name to be sent its key.
 */
export type AgentHeaderConfig = Record<string, Record<string, string>>;

function keyMatches(key: string, agent: Agent): boolean {
  if (key === agent.subject) return true;
  if (!agent.endpoint) return false;
  try {
    const url = new URL(agent.endpoint);
    return key === url.origin || key.toLowerCase() === url.hostname.toLowerCase();
  } catch {
    return false;
  }
}

/**
 * Headers for one agent from every matching entry. A named variable that is unset is a config error naming the
 * variable (never a value), so a missing key fails the run instead of scoring the agent 0.
 */
export function resolveAgentHeaders(
  config: AgentHeaderConfig,
  agent: Agent,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, headers] of Object.entries(config)) {
    if (!keyMatches(key, agent)) continue;
    for (const [header, variable] of Object.entries(headers)) {
      const value = env[variable];
      if (value === undefined || value === '') {
        throw new ConfigError(`environment variable ${variable} (header ${header} for ${key}) is not set`, {
          hint: `export ${variable}=… or remove the header from agentHeaders in the config`,
        });
      }
      out[header.toLowerCase()] = value;
    }
  }
  return out;
}
