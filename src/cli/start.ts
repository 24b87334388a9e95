/**
 * `trove start`: load the configuration, open the node (data path, catalog, shards), start the
 * HTTP server, join the node registry and log one `trove started` line. SIGTERM or SIGINT stops
 * it gracefully: the server stops accepting and finishes in-flight requests, then the node
 * closes its shards (syncing every WAL) and leaves the registry; the process exits 0.
 */
import type { Command } from 'commander';
import { ConfigError, loadConfig, parseSettingFlags, type NodeConfig } from '../config/load-config.ts';
import type { RunningNode } from './run-node.ts';

/** Runs `trove start` until a signal stops it. */
async function startCommand(options: { config?: string }, flags: Record<string, string>): Promise<void> {
  let config: NodeConfig;
  try {
    config = loadConfig({ configPath: options.config, env: process.env, flags });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`trove: ${error.message}\n`);
    process.exit(1);
  }
  // Loaded only now, so that `--help` and configuration errors answer without loading the server.
  const { createLogger, runNode } = await import('./run-node.ts');
  const logger = createLogger(config);
  let running: RunningNode;
  try {
    running = await runNode(config, logger);
  } catch (error) {
    logger.fatal({ err: error }, 'trove failed to start');
    process.exit(1);
  }
  const info = running.node.info();
  logger.info(
    { address: running.address, dataPath: info.dataPath, nodeId: info.nodeId, nodeName: info.nodeName, cluster: info.clusterName },
    `trove started on ${running.address} (node ${info.nodeName} [${info.nodeId}], data ${info.dataPath})`,
  );

  let signals = 0;
  const shutdown = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      logger.warn({ signal }, 'second signal during shutdown, exiting now');
      process.exit(1);
    }
    logger.info({ signal }, 'stopping: finishing in-flight requests and closing shards');
    running.stop().then(
      () => {
        logger.info('trove stopped');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

/** Adds `trove start` to the CLI. */
export function registerStartCommand(program: Command): void {
  program
    .command('start')
    .description('run a node (settings: --config file, then TROVE_* environment, then --setting.key value flags)')
    .option('--config <file>', 'YAML configuration file with flat dotted keys')
    .option('--port <port>', 'shortcut for --http.port')
    .option('--host <host>', 'shortcut for --http.host')
    .option('--data <path>', 'shortcut for --path.data')
    .option('--name <name>', 'shortcut for --node.name')
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (options: { config?: string; port?: string; host?: string; data?: string; name?: string }, command: Command) => {
      const flags: Record<string, string> = {};
      for (const [name, key] of [['port', 'http.port'], ['host', 'http.host'], ['data', 'path.data'], ['name', 'node.name']] as const) {
        const value = options[name];
        if (value !== undefined) flags[key] = value;
      }
      try {
        Object.assign(flags, parseSettingFlags(command.args));
      } catch (error) {
        process.stderr.write(`trove: ${(error as Error).message}\n`);
        process.exit(1);
      }
      await startCommand(options, flags);
    });
}
