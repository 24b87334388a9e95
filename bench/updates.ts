/**
 * Update benchmark (partial updates): throughput of `incr` on an inplace field vs the same `incr`
 * on a regular field vs a full-document reindex, on collections of several sizes with small
 * (~200 B) and large (~20 KB) documents. In process, on one shard; updates are sent in batches
 * of 100 (one group commit each), on random ids of documents that sit in segments.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Shard } from '../src/engine/shard/shard.ts';
import type { WriteOp } from '../src/engine/shard/operations.ts';
import { Prng } from './corpora/prng.ts';
import { renderTable, verdict } from './report/table.ts';
import { formatRate } from './report/stats.ts';

/** Options of the update suite. */
export interface UpdatesOptions {
  /** Collection sizes (documents). */
  sizes: number[];
  /** Largest collection loaded with large documents (they take 100x the space). */
  maxLargeDocs: number;
  /** Updates timed per kind and configuration. */
  updates: number;
}

const WORDS = 'search engine shard segment column update index query merge epoch durable log fast vector cluster node wal field term score'.split(' ');
const BATCH = 100;

function text(random: Prng, bytes: number): string {
  const parts: string[] = [];
  let length = 0;
  while (length < bytes) {
    const word = WORDS[random.below(WORDS.length)]! + (random.below(50) === 0 ? String(random.below(1000)) : '');
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(' ');
}

function documentFor(id: number, bodyBytes: number, plain: number): Record<string, unknown> {
  const random = new Prng(id + 1);
  return { title: text(random, 40), body: text(random, bodyBytes), views: id % 1000, plain };
}

async function load(shard: Shard, docs: number, bodyBytes: number): Promise<void> {
  for (let start = 0; start < docs; start += 2000) {
    const ops: WriteOp[] = [];
    for (let id = start; id < Math.min(docs, start + 2000); id++) ops.push({ kind: 'index', id: String(id), source: documentFor(id, bodyBytes, 0) });
    await shard.writeBatch(ops);
  }
  await shard.epoch();
  await shard.waitForMaintenance();
}

type Kind = 'inplace incr' | 'regular incr' | 'full reindex';

/** Wall-clock rate and CPU time per update (CPU time is robust to other load on a shared host). */
interface UpdateFigures {
  perSecond: number;
  cpuMicros: number;
}

async function timeUpdates(shard: Shard, docs: number, bodyBytes: number, kind: Kind, count: number, seed: number): Promise<UpdateFigures> {
  const random = new Prng(seed);
  const started = performance.now();
  const cpuStart = process.cpuUsage();
  let done = 0;
  // At least `count` updates and at least one second, so short runs are not all noise.
  for (; done < count || performance.now() - started < 1000; done += BATCH) {
    const ops: WriteOp[] = [];
    for (let index = 0; index < BATCH; index++) {
      const id = random.below(docs);
      if (kind === 'inplace incr') ops.push({ kind: 'update', id: String(id), ops: [{ op: 'incr', field: 'views', value: 1 }] });
      else if (kind === 'regular incr') ops.push({ kind: 'update', id: String(id), ops: [{ op: 'incr', field: 'plain', value: 1 }] });
      else ops.push({ kind: 'index', id: String(id), source: documentFor(id, bodyBytes, done + index) });
    }
    const results = await shard.writeBatch(ops);
    const failed = results.find((result) => result instanceof Error);
    if (failed) throw failed;
  }
  const cpu = process.cpuUsage(cpuStart);
  return { perSecond: done / ((performance.now() - started) / 1000), cpuMicros: (cpu.user + cpu.system) / done };
}

/** Runs the update suite and prints its table. */
export async function updatesSuite(options: UpdatesOptions): Promise<void> {
  const kinds: Kind[] = ['inplace incr', 'regular incr', 'full reindex'];
  const rows: { docs: number; size: string; rates: number[]; cpu: number[] }[] = [];
  for (const [size, bodyBytes] of [['small (~200 B)', 120], ['large (~20 KB)', 20_000]] as const) {
    for (const docs of options.sizes) {
      if (bodyBytes > 1000 && docs > options.maxLargeDocs) continue;
      const dir = mkdtempSync(path.join(tmpdir(), 'trove-bench-updates-'));
      try {
        const shard = await Shard.open({
          dir,
          uuid: 'bench-updates',
          mapping: { properties: { title: { type: 'text' }, body: { type: 'text' }, views: { type: 'long', inplace: true }, plain: { type: 'long' } } },
          settings: { epochIntervalMs: 3_600_000 },
        });
        const loadStart = performance.now();
        await load(shard, docs, bodyBytes);
        process.stderr.write(`updates: loaded ${docs} ${size} docs in ${((performance.now() - loadStart) / 1000).toFixed(1)} s\n`);
        // Each kind several times on the same random ids; the best run counts (the first warms up).
        const rates: number[] = [];
        const cpu: number[] = [];
        for (const kind of kinds) {
          let best: UpdateFigures = { perSecond: 0, cpuMicros: Infinity };
          // Inplace updates are cheap: more of them and a third run keep GC noise out of the figure.
          const runs = kind === 'inplace incr' ? 3 : 2;
          for (let run = 0; run < runs; run++) {
            const figures = await timeUpdates(shard, docs, bodyBytes, kind, kind === 'inplace incr' ? options.updates * 10 : options.updates, 7 + run);
            if (figures.cpuMicros < best.cpuMicros) best = figures;
            await shard.waitForMaintenance();
          }
          rates.push(best.perSecond);
          cpu.push(best.cpuMicros);
        }
        rows.push({ docs, size, rates, cpu });
        await shard.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  const baseline = rows[0]!.cpu[0]!;
  const spread = Math.max(...rows.map((row) => Math.abs(row.cpu[0]! / baseline - 1)));
  process.stdout.write('\nPartial updates: updates/s (batches of 100 per group commit), one shard, in process\n');
  process.stdout.write(
    renderTable(
      ['docs', 'doc size', 'inplace incr', 'regular incr', 'full reindex', 'CPU µs/update inplace', 'regular', 'reindex', 'inplace CPU vs first row'],
      rows.map((row) => [
        row.docs.toLocaleString('en-US'),
        row.size,
        ...row.rates.map((rate) => formatRate(rate, '/s')),
        ...row.cpu.map((micros) => micros.toFixed(1)),
        `${((row.cpu[0]! / baseline - 1) * 100).toFixed(0)}%`,
      ]),
    ),
  );
  process.stdout.write(`\nO(1) target (CPU time per inplace update): inplace within ±25% across all sizes: largest deviation ${(spread * 100).toFixed(0)}% ${verdict(spread <= 0.25)}\n`);
}
