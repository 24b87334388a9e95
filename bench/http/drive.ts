/** Runs the query mix with a number of concurrent clients for a fixed time and times every query. */
import { percentile } from '../report/stats.ts';
import { MIX_KINDS, type MixKind, type MixQuery } from './query-mix.ts';

/** Latency figures of one kind of query (or of all of them). */
export interface MixTiming {
  queries: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

/** What a timed run of the mix measured. */
export interface DriveResult {
  concurrency: number;
  durationMs: number;
  queriesPerSecond: number;
  overall: MixTiming;
  perKind: Record<MixKind, MixTiming>;
  /** Message of the first failed query, if any. */
  firstError: string | null;
}

/** Concurrency and duration of a run. */
export interface DriveOptions {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
}

/** Executes one query; throws when the engine or server reports a failure. */
export type ExecuteQuery = (query: MixQuery) => Promise<void> | void;

interface Samples {
  latencies: Record<MixKind, number[]>;
  errors: Record<MixKind, number>;
  firstError: string | null;
}

async function runClients(queries: readonly MixQuery[], concurrency: number, durationMs: number, execute: ExecuteQuery): Promise<Samples> {
  const samples: Samples = {
    latencies: Object.fromEntries(MIX_KINDS.map((kind) => [kind, []])) as unknown as Record<MixKind, number[]>,
    errors: Object.fromEntries(MIX_KINDS.map((kind) => [kind, 0])) as Record<MixKind, number>,
    firstError: null,
  };
  const deadline = performance.now() + durationMs;
  let next = 0;
  const client = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const query = queries[next++ % queries.length] as MixQuery;
      const start = performance.now();
      try {
        await execute(query);
        samples.latencies[query.kind].push(performance.now() - start);
      } catch (error) {
        samples.errors[query.kind]++;
        samples.firstError ??= `${query.kind}: ${(error as Error).message}`;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  return samples;
}

function timingOf(latencies: readonly number[], errors: number): MixTiming {
  return { queries: latencies.length, p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), errors };
}

/** Warms up, then runs the mix for the configured duration and summarises it. */
export async function driveMix(queries: readonly MixQuery[], options: DriveOptions, execute: ExecuteQuery): Promise<DriveResult> {
  await runClients(queries, options.concurrency, options.warmupMs, execute);
  const started = performance.now();
  const samples = await runClients(queries, options.concurrency, options.durationMs, execute);
  const durationMs = performance.now() - started;
  const all = MIX_KINDS.flatMap((kind) => samples.latencies[kind]);
  const errors = MIX_KINDS.reduce((sum, kind) => sum + samples.errors[kind], 0);
  return {
    concurrency: options.concurrency,
    durationMs,
    queriesPerSecond: (all.length / durationMs) * 1000,
    overall: timingOf(all, errors),
    perKind: Object.fromEntries(MIX_KINDS.map((kind) => [kind, timingOf(samples.latencies[kind], samples.errors[kind])])) as Record<MixKind, MixTiming>,
    firstError: samples.firstError,
  };
}
