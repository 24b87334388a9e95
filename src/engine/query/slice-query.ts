/**
 * The document filter of a sliced scroll or point-in-time search (`slice: {id, max}` with more
 * slices than shards, src/node/search-slice.ts): `{"_slice": {"id": k, "max": n}}` matches the live
 * documents whose `_id` hashes to k modulo n (MurmurHash3 x86 32-bit of the id's UTF-8 bytes, seed
 * 7919, the floor modulo), so the n filters of one shard partition its documents: each in exactly
 * one. It scores like `match_all` (a constant).
 */
import type { LeafReader } from '../segment/leaf-reader.ts';
import { checkKeys, dslError, type DslObject } from './dsl-reader.ts';
import { DocListScorer } from './doc-set-scorers.ts';
import type { Query, Scorer, Weight } from './scorer.ts';
import { NO_SUB_QUERIES, SimpleWeight } from './scorer.ts';
import type { SearchContext } from './search-context.ts';

const SEED = 7919;

/** MurmurHash3 (x86, 32-bit) of a string's UTF-8 bytes, as a signed 32-bit integer. */
export function murmur3(text: string, seed = SEED): number {
  const bytes = Buffer.from(text, 'utf8');
  let hash = seed | 0;
  const c1 = 0xcc9e2d51;
  const c2 = 0x1b873593;
  const blocks = bytes.length >>> 2;
  for (let block = 0; block < blocks; block++) {
    let k = bytes.readInt32LE(block * 4);
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    hash ^= k;
    hash = (hash << 13) | (hash >>> 19);
    hash = (Math.imul(hash, 5) + 0xe6546b64) | 0;
  }
  const tail = blocks * 4;
  const rest = bytes.length & 3;
  if (rest > 0) {
    let k = 0;
    if (rest === 3) k ^= bytes[tail + 2]! << 16;
    if (rest >= 2) k ^= bytes[tail + 1]! << 8;
    k ^= bytes[tail]!;
    k = Math.imul(k, c1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, c2);
    hash ^= k;
  }
  hash ^= bytes.length;
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash | 0;
}

/** The slice (0 <= slice < slices) a document id belongs to. */
export function sliceOfId(id: string, slices: number): number {
  return (((murmur3(id) % slices) + slices) % slices) | 0;
}

/** Parses `{"_slice": {"id", "max"}}`. */
export function parseSliceFilter(options: DslObject): SliceQuery {
  checkKeys(options, ['id', 'max'], '_slice');
  const { id, max } = options;
  if (!Number.isSafeInteger(max) || (max as number) < 1) throw dslError('[_slice] [max] must be a positive integer');
  if (!Number.isSafeInteger(id) || (id as number) < 0 || (id as number) >= (max as number)) throw dslError('[_slice] [id] must be an integer in [0, max)');
  return new SliceQuery(id as number, max as number);
}

/** See the module comment. */
export class SliceQuery implements Query {
  constructor(
    readonly id: number,
    readonly max: number,
  ) {}

  createWeight(_context: SearchContext, needsScores: boolean, boost: number): Weight {
    return new SliceWeight(this.id, this.max, needsScores ? boost : 0);
  }

  extractTerms(): void {}

  subQueries(): readonly Query[] {
    return NO_SUB_QUERIES;
  }
}

class SliceWeight extends SimpleWeight {
  constructor(
    private readonly id: number,
    private readonly max: number,
    private readonly constantScore: number,
  ) {
    super();
  }

  scorer(leaf: LeafReader): Scorer | null {
    const docs: number[] = [];
    for (let doc = 0; doc < leaf.maxDoc; doc++) {
      if (leaf.isLive(doc) && sliceOfId(leaf.meta(doc).id, this.max) === this.id) docs.push(doc);
    }
    return docs.length === 0 ? null : new DocListScorer(Int32Array.from(docs), this.constantScore);
  }
}
