/**
 * The node's operational services, created before anything else of a node so every component
 * gets its logger from them: named log targets (`log.level`), runtime settings with their
 * listeners, the counters the node layer increments, search lanes with the slow log, host facts,
 * and the background sampler (CPU steal, event-loop delay, cgroup throttling). The node service
 * owns one instance; the HTTP routes of `_node/_local`, `_metrics` and settings read from it.
 */
import type { Logger } from 'pino';
import type { NodeConfig } from '../config/load-config.ts';
import { CgroupThrottleProbe } from './host/cgroup-facts.ts';
import type { HostWarning } from './host/host-warnings.ts';
import { HostFiles } from './host/host-files.ts';
import { readHostInfo, type HostInfo } from './host/host-info.ts';
import { DEFAULT_LANE, SearchLanes, laneKeys } from './lanes/search-lanes.ts';
import { SlowLog } from './lanes/slow-log.ts';
import { LogTargets } from './logging/log-targets.ts';
import { DynamicSettings } from './settings/dynamic-settings.ts';
import { BackgroundSampler, DEFAULT_SAMPLE_INTERVAL_MS } from './stats/background-sampler.ts';
import { CpuStealSampler } from './stats/cpu-steal.ts';
import { EventLoopProbe } from './stats/event-loop-probe.ts';
import { NodeCounters } from './stats/node-counters.ts';
import { collectNodeStats, type NodeStats, type NodeStatsSources } from './stats/node-stats.ts';
import { PrometheusExporter } from './stats/prometheus.ts';

/** Listen backlog of the HTTP server (Node's default, which the server keeps), for the `somaxconn` check. */
export const HTTP_BACKLOG = 511;

/** Options of `NodeOps`. */
export interface NodeOpsOptions {
  config: NodeConfig;
  /** The node's root logger; its level is the default level until `log.level` changes. */
  logger: Logger;
  /** Root of the host's `/proc`, `/sys` and `/etc` (tests point it at a fake tree). Default `/`. */
  hostRoot?: string;
  /** Interval of background samples, default 5 s. */
  sampleIntervalMs?: number;
}

/** The figures of node stats that the node service supplies. */
export type NodeStatsInputs = Omit<NodeStatsSources, 'counters' | 'lanes' | 'steal' | 'eventLoop' | 'files'>;

/** See the module comment. */
export class NodeOps {
  readonly logs: LogTargets;
  readonly settings: DynamicSettings;
  readonly counters = new NodeCounters();
  readonly lanes: SearchLanes;
  private readonly files: HostFiles;
  private readonly steal: CpuStealSampler;
  private readonly eventLoop = new EventLoopProbe();
  private readonly throttle: CgroupThrottleProbe;
  private readonly sampler: BackgroundSampler;
  private readonly prometheus = new PrometheusExporter();

  constructor(private readonly options: NodeOpsOptions) {
    const { config, logger } = options;
    this.logs = new LogTargets(logger, config.values['log.level']);
    const defaultLane = laneKeys(DEFAULT_LANE);
    this.settings = new DynamicSettings({
      config,
      logger: this.logs.target('settings'),
      implicitKeys: [defaultLane.maxConcurrent, defaultLane.maxQueue],
    });
    this.settings.onChange((change) => this.logs.apply(change.values['log.level']), ['log.level']);
    const slowLog = new SlowLog(() => this.settings.values()['node.search.slow_threshold_ms'], this.logs.target('slowlog'));
    this.lanes = new SearchLanes(this.settings.values(), slowLog);
    this.settings.onChange(this.lanes.onSettingsChange, ['search.lanes.']);
    this.files = new HostFiles(options.hostRoot ?? '/');
    this.steal = new CpuStealSampler(this.files);
    this.throttle = new CgroupThrottleProbe(this.files);
    this.sampler = new BackgroundSampler(
      [this.steal, this.eventLoop, this.throttle],
      this.logs.target('stats'),
      options.sampleIntervalMs ?? DEFAULT_SAMPLE_INTERVAL_MS,
    );
  }

  /** Takes the first background samples and starts the sampling timer. */
  start(): Promise<void> {
    return this.sampler.start();
  }

  /** Stops background sampling. */
  async close(): Promise<void> {
    await this.sampler.stop();
    this.eventLoop.stop();
  }

  /** Every figure of `GET /_node/_local/stats`. */
  nodeStats(inputs: NodeStatsInputs): Promise<NodeStats> {
    return collectNodeStats({ ...inputs, counters: this.counters, lanes: this.lanes, steal: this.steal, eventLoop: this.eventLoop, files: this.files });
  }

  /** The stats in Prometheus text format, and its content type. */
  async metrics(inputs: NodeStatsInputs): Promise<{ contentType: string; text: string }> {
    return { contentType: this.prometheus.contentType, text: await this.prometheus.render(await this.nodeStats(inputs)) };
  }

  /** The `host` object and its warnings for the node info. */
  hostInfo(): Promise<{ host: HostInfo; warnings: HostWarning[] }> {
    return readHostInfo({ files: this.files, dataPath: this.options.config.values['path.data'], throttle: this.throttle, httpBacklog: HTTP_BACKLOG });
  }
}
