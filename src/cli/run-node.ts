/**
 * Opening a node with its HTTP server: the node service (data path, catalog, shards), the
 * Fastify server from src/api, listening, and joining the node registry under the bound address.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildServer } from '../api/server.ts';
import type { LogFormat, NodeConfig } from '../config/load-config.ts';
import { NodeService } from '../node/node-service.ts';
import { FALLBACK_LEVEL, parseDirectives, pinoLevel } from '../ops/logging/log-directives.ts';
import { createRootLogger } from '../ops/logging/log-output.ts';

/** A started node with its HTTP server. */
export interface RunningNode {
  node: NodeService;
  server: FastifyInstance;
  /** Base URL the server listens on, e.g. `http://127.0.0.1:9200`. */
  address: string;
  /** Graceful stop (idempotent): server first, then the node. */
  stop(): Promise<void>;
}

/** The pino level of a `log.level` directive list: its bare (untargeted) level, `info` if none. */
export function baseLogLevel(directives: string): string {
  return pinoLevel(parseDirectives(directives).defaultLevel ?? FALLBACK_LEVEL);
}

/**
 * Creates the node's root logger on stdout (`log.format`: JSON lines, or pretty lines on a
 * terminal) at the default level of `log.level`; the node's log targets (src/ops/logging) apply
 * the target directives.
 */
export function createLogger(config: NodeConfig): Logger {
  return createRootLogger({
    level: baseLogLevel(config.values['log.level']),
    nodeName: config.values['node.name'],
    format: config.values['log.format'] as LogFormat,
  });
}

function formatAddress(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Opens the node and its HTTP server and starts listening. */
export async function runNode(config: NodeConfig, logger: Logger): Promise<RunningNode> {
  const node = await NodeService.open({ config, logger });
  let server: FastifyInstance;
  try {
    server = await buildServer({ node, config, logger });
    await server.listen({ host: config.values['http.host'], port: config.values['http.port'] });
  } catch (error) {
    await node.close();
    throw error;
  }
  const bound = server.server.address();
  const port = bound !== null && typeof bound === 'object' ? bound.port : config.values['http.port'];
  const address = formatAddress(config.values['http.host'], port);
  await node.register(address);
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      try {
        await server.close();
      } finally {
        await node.close();
      }
    })();
    return stopping;
  };
  return { node, server, address, stop };
}
