/**
 * Engine-suite worker for the Trove shard engine, in process. Batches go through `writeBatch`
 * (each resolves after its WAL fsync); indexing ends with an epoch, queries run after a force
 * merge to one segment.
 */
import path from 'node:path';
import { DEFAULT_ENGINE_SETTINGS, Shard } from '../../src/engine/shard/shard.ts';
import { EMAIL_MAPPING } from '../corpora/emails.ts';
import type { QueryClass } from '../query-set.ts';
import { directoryBytes, runWorker, type CorpusDocument, type PeerEngine, type WorkerRequest } from './harness.ts';

/**
 * WAL records are kept for the change feed by default; the bench keeps none past a checkpoint,
 * like SQLite's checkpointed WAL, so the disk figure is the index itself.
 */
const SETTINGS = { ...DEFAULT_ENGINE_SETTINGS, changesRetentionMs: 0 };

/** The Trove query body of a bench query. */
export function troveQuery(queryClass: QueryClass, terms: readonly string[]): Record<string, unknown> {
  const text = terms.join(' ');
  switch (queryClass) {
    case 'common':
    case 'rare':
      return { match: { body: { query: text } } };
    case 'and':
      return { match: { body: { query: text, operator: 'and' } } };
    case 'or':
      return { match: { body: { query: text, operator: 'or' } } };
    case 'phrase':
      return { match_phrase: { body: text } };
  }
}

/** A shard opened on the worker's data directory. */
class TroveEngine implements PeerEngine {
  readonly layer = 'after epoch() + forceMerge({maxSegments: 1}) (one segment, empty mutable layer)';

  private constructor(
    private shard: Shard,
    private readonly dir: string,
  ) {}

  static async open(dir: string): Promise<TroveEngine> {
    return new TroveEngine(await TroveEngine.openShard(dir), dir);
  }

  private static openShard(dir: string): Promise<Shard> {
    return Shard.open({ dir, uuid: 'bench', mapping: EMAIL_MAPPING, settings: SETTINGS });
  }

  async index(documents: CorpusDocument[]): Promise<void> {
    const results = await this.shard.writeBatch(documents.map(({ id, source }) => ({ kind: 'index', id, source })));
    const failure = results.find((result) => result instanceof Error);
    if (failure) throw failure;
  }

  finishIndexing(): Promise<void> {
    return this.shard.epoch();
  }

  async optimize(): Promise<void> {
    await this.shard.forceMerge({ maxSegments: 1 });
  }

  diskBytes(): Promise<number> {
    return directoryBytes(this.dir);
  }

  async reopen(): Promise<void> {
    await this.shard.close();
    this.shard = await TroveEngine.openShard(this.dir);
  }

  supports(): boolean {
    return true;
  }

  search(queryClass: QueryClass, terms: readonly string[]): number {
    const searcher = this.shard.searcher();
    try {
      return searcher.query({ query: troveQuery(queryClass, terms), from: 0, size: 10 }).hits.length;
    } finally {
      searcher.release();
    }
  }

  close(): Promise<void> {
    return this.shard.close();
  }
}

await runWorker('trove', (request: WorkerRequest) => TroveEngine.open(path.join(request.dataDir, 'shard')));
