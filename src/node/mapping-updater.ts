/**
 * Dynamic mapping before writes: new fields a document brings are added to the collection's
 * mapping through the coordinator (compare-and-set on the collection version), and the write
 * proceeds only once this node has applied that catalog revision, so the shard indexes them.
 */
import { CatalogError } from '../cluster/catalog-error.ts';
import type { Coordinator } from '../cluster/coordinator.ts';
import { EngineError } from '../engine/errors.ts';
import { dynamicMappingUpdate } from '../engine/mapping/dynamic.ts';
import type { Mapping } from '../engine/mapping/mapping.ts';
import type { Router } from '../cluster/router.ts';
import { asNodeError } from './node-error.ts';

/** One write's contribution: the objects whose fields it may add, and an optional last check. */
export interface MappingCandidate {
  /** Documents (or partial documents) to detect new fields in. */
  sources: ReadonlyArray<Record<string, unknown>>;
  /**
   * Run only when the sources bring new fields, before the mapping changes: an error here fails
   * the item without touching the mapping (e.g. an update of a missing document).
   */
  admit?: () => Promise<EngineError | null>;
}

/** Attempts before a compare-and-set race is reported; each lost attempt means another writer won. */
const MAX_ATTEMPTS = 50;

/** Applies dynamic mapping updates for batches of writes. */
export class MappingUpdater {
  constructor(
    private readonly coordinator: Coordinator,
    private readonly router: Router,
  ) {}

  /**
   * Extends the mapping of `collection` with the new fields of every candidate, in one catalog
   * change. Returns one entry per candidate: null when it may be written, or the error that fails
   * it (strict mapping, invalid field name, limits). Throws only for collection-level failures.
   */
  async ensure(collection: string, candidates: readonly MappingCandidate[]): Promise<Array<EngineError | null>> {
    for (let attempt = 1; ; attempt++) {
      const hosted = this.router.collection(collection);
      const base = hosted.meta.mapping;
      const errors: Array<EngineError | null> = [];
      let mapping: Mapping = base;
      for (const candidate of candidates) {
        const outcome = await extend(mapping, candidate);
        errors.push(outcome.error);
        if (outcome.mapping) mapping = outcome.mapping;
      }
      if (mapping === base) return errors;
      try {
        await this.coordinator.putMapping(collection, mapping, { expectedVersion: hosted.meta.version });
        await this.router.waitForRevision(this.coordinator.revision);
        return errors;
      } catch (error) {
        if (!(error instanceof CatalogError && error.code === 'catalog_conflict') || attempt >= MAX_ATTEMPTS) {
          throw asNodeError(error);
        }
        // Another writer changed the collection first: catch up with the catalog and recompute.
        await this.router.waitForRevision(this.coordinator.revision);
      }
    }
  }
}

async function extend(mapping: Mapping, candidate: MappingCandidate): Promise<{ mapping: Mapping | null; error: EngineError | null }> {
  let extended: Mapping | null = null;
  try {
    for (const source of candidate.sources) extended = dynamicMappingUpdate(extended ?? mapping, source) ?? extended;
  } catch (error) {
    if (error instanceof EngineError) return { mapping: null, error };
    throw error;
  }
  if (extended === null) return { mapping: null, error: null };
  const refused = (await candidate.admit?.()) ?? null;
  return refused ? { mapping: null, error: refused } : { mapping: extended, error: null };
}
