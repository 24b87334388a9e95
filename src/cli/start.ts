/**
 * `trove start`: load the configuration, open the node (data path, catalog, shards), start the
 * HTTP server, join the node registry and log one `trove started` line. SIGTERM or SIGINT stops
 * it gracefully: the server stops accepting and finishes in-flight requests, then the node
 * closes its shards (syncing every WAL) and leaves the registry; the process exits 0. A start
 * that fails prints one line on stderr and exits 1 (src/cli/start-failure.ts). The process umask
 * is 077, so every file under the data path is 0600 (the data path itself is made 0700).
 */
import type { Command } from 'commander';
import { ConfigError, loadConfig, parseSettingFlags, type NodeConfig } from '../config/load-config.ts';
import { restrictFileModes } from '../node/data-path.ts';
import { LogTargets } from '../ops/logging/log-targets.ts';
import type { RunningNode } from './run-node.ts';
import { describeStartFailure, failStart } from './start-failure.ts';

/** A second signal this soon after the first is the same one delivered twice, not a second Ctrl-C. */
const REPEATED_SIGNAL_MS = 1000;

/** Runs `trove start` until a signal stops it. */
async function startCommand(options: { config?: string }, flags: Record<string, string>): Promise<void> {
  let config: NodeConfig;
  try {
    config = loadConfig({ configPath: options.config, env: process.env, flags });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    failStart(error.message);
  }
  // Before anything is created: the data path's files are this user's only, whatever the umask.
  restrictFileModes();
  // Loaded only now, so that `--help` and configuration errors answer without loading the server.
  const { createLogger, runNode } = await import('./run-node.ts');
  const logger = createLogger(config);
  let running: RunningNode;
  try {
    running = await runNode(config, logger);
  } catch (error) {
    const startLogger = new LogTargets(logger, config.values['log.level']).target('start');
    failStart(describeStartFailure(error, { host: config.values['http.host'], port: config.values['http.port'] }), error, startLogger);
  }
  const info = running.node.info();
  logger.info(
    { address: running.address, dataPath: info.dataPath, nodeId: info.nodeId, nodeName: info.nodeName, cluster: info.clusterName },
    `trove started on ${running.address} (node ${info.nodeName} [${info.nodeId}], data ${info.dataPath})`,
  );

  let firstSignalAt: number | null = null;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (firstSignalAt !== null) {
      // One Ctrl-C under `npm start` arrives twice: from the terminal and relayed by tsx.
      if (Date.now() - firstSignalAt < REPEATED_SIGNAL_MS) return;
      logger.warn({ signal }, 'second signal during shutdown, exiting now');
      process.exit(1);
    }
    firstSignalAt = Date.now();
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
        failStart((error as Error).message);
      }
      await startCommand(options, flags);
    });
}
