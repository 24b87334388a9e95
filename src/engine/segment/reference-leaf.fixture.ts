/**
 * TEST FIXTURE ONLY: a simple in-memory LeafReader built from plain, already tokenized
 * documents. The segment tests write segments from it and compare segment readers against it.
 * It favours obviousness over speed and is not used by the engine.
 */
import { encodeNorm } from './norms.ts';
import {
  NO_MORE_DOCS,
  POSTINGS_BLOCK_SIZE,
  type DocMeta,
  type DocNumbers,
  type FieldStats,
  type InplaceColumn,
  type NumericRangeIndex,
  type KeywordColumn,
  type LeafReader,
  type NumericColumn,
  type PostingsCursor,
  type TermsIterator,
} from './leaf-reader.ts';
import type { SegmentFieldInfo } from './segment-writer.ts';

/** A fixture document: tokens per text field, values per keyword and numeric field. */
export interface TestDoc {
  id: string;
  text?: Record<string, string[]>;
  keyword?: Record<string, string[]>;
  numeric?: Record<string, number[]>;
  /** Stored source (bytes are stored as they are, anything else as its JSON); defaults to `{id}`. */
  source?: unknown;
  seqNo?: number;
  version?: number;
  primaryTerm?: number;
  /** Marks the doc deleted in the fixture. */
  deleted?: boolean;
}

interface TestPosting {
  doc: number;
  positions: number[];
}

interface TestField {
  positions: boolean;
  terms: Map<string, TestPosting[]>;
  norms: Map<number, number>;
  stats: FieldStats;
}

/** Fixture cursor: plain arrays, blocks of POSTINGS_BLOCK_SIZE for the block-max methods. */
class TestPostingsCursor implements PostingsCursor {
  doc = -1;
  readonly docFreq: number;
  readonly maxFreq: number;
  readonly minNorm: number;
  private index = -1;
  private shallowBlock = 0;

  constructor(
    private readonly postings: TestPosting[],
    private readonly norms: Map<number, number>,
  ) {
    this.docFreq = postings.length;
    this.maxFreq = Math.max(...postings.map((posting) => posting.positions.length));
    this.minNorm = Math.min(...postings.map((posting) => norms.get(posting.doc) ?? 0));
  }

  next(): number {
    this.index++;
    return (this.doc = this.index < this.postings.length ? this.postings[this.index]!.doc : NO_MORE_DOCS);
  }

  advance(target: number): number {
    while (this.doc < target) this.next();
    return this.doc;
  }

  freq(): number {
    return this.postings[this.index]!.positions.length;
  }

  positions(): ArrayLike<number> {
    return this.postings[this.index]!.positions;
  }

  shallowAdvance(target: number): number {
    const blocks = Math.ceil(this.postings.length / POSTINGS_BLOCK_SIZE);
    let block = 0;
    while (block < blocks && this.blockPostings(block).at(-1)!.doc < target) block++;
    this.shallowBlock = block;
    return block < blocks ? this.blockPostings(block).at(-1)!.doc : NO_MORE_DOCS;
  }

  blockMaxFreq(): number {
    return Math.max(0, ...this.blockPostings(this.shallowBlock).map((posting) => posting.positions.length));
  }

  blockMinNorm(): number {
    return Math.min(255, ...this.blockPostings(this.shallowBlock).map((posting) => this.norms.get(posting.doc) ?? 0));
  }

  private blockPostings(block: number): TestPosting[] {
    return this.postings.slice(block * POSTINGS_BLOCK_SIZE, (block + 1) * POSTINGS_BLOCK_SIZE);
  }
}

/** Fixture numeric column; single-valued fields double as inplace columns. */
class TestNumericColumn implements InplaceColumn {
  constructor(private readonly values: number[][]) {}

  count(doc: number): number {
    return this.values[doc]?.length ?? 0;
  }

  value(doc: number, index: number): number {
    return this.values[doc]![index]!;
  }

  get(doc: number): number {
    return this.values[doc]?.[0] ?? NaN;
  }

  set(doc: number, value: number): void {
    this.values[doc] = Number.isNaN(value) ? [] : [value];
  }
}

/** Fixture keyword column. */
class TestKeywordColumn implements KeywordColumn {
  readonly ordinalCount: number;

  constructor(
    private readonly sorted: string[],
    private readonly perDoc: number[][],
  ) {
    this.ordinalCount = sorted.length;
  }

  term(ordinal: number): string {
    return this.sorted[ordinal]!;
  }

  lookup(term: string): number {
    return this.sorted.indexOf(term);
  }

  count(doc: number): number {
    return this.perDoc[doc]?.length ?? 0;
  }

  ordinal(doc: number, index: number): number {
    return this.perDoc[doc]![index]!;
  }
}

/** The fixture leaf. */
export class TestLeaf implements LeafReader {
  readonly maxDoc: number;
  private readonly fields = new Map<string, TestField>();
  private readonly numeric = new Map<string, TestNumericColumn>();
  private readonly keyword = new Map<string, TestKeywordColumn>();
  private readonly live: boolean[];
  private readonly docsById = new Map<string, number[]>();

  constructor(
    readonly docs: TestDoc[],
    readonly inplaceFields: string[] = [],
    readonly name = 'test-leaf',
  ) {
    this.maxDoc = docs.length;
    this.live = docs.map((doc) => !doc.deleted);
    const keywordValues = new Map<string, string[][]>();
    const numericValues = new Map<string, number[][]>();
    docs.forEach((document, doc) => {
      const sameId = this.docsById.get(document.id) ?? [];
      this.docsById.set(document.id, sameId);
      sameId.push(doc);
      for (const [field, tokens] of Object.entries(document.text ?? {})) {
        const entry = this.field(field, true);
        if (tokens.length === 0) continue;
        entry.norms.set(doc, encodeNorm(tokens.length));
        entry.stats.docCount++;
        entry.stats.sumTotalTermFreq += tokens.length;
        tokens.forEach((token, position) => {
          const list = entry.terms.get(token) ?? [];
          entry.terms.set(token, list);
          if (list.at(-1)?.doc === doc) list.at(-1)!.positions.push(position);
          else list.push({ doc, positions: [position] });
        });
      }
      for (const [field, values] of Object.entries(document.keyword ?? {})) {
        const distinct = [...new Set(values)];
        const perDoc = keywordValues.get(field) ?? [];
        keywordValues.set(field, perDoc);
        perDoc[doc] = distinct;
        if (distinct.length === 0) continue;
        const entry = this.field(field, false);
        entry.norms.set(doc, 1);
        entry.stats.docCount++;
        entry.stats.sumTotalTermFreq += 1;
        for (const value of distinct) {
          const list = entry.terms.get(value) ?? [];
          entry.terms.set(value, list);
          list.push({ doc, positions: [0] });
        }
      }
      for (const [field, values] of Object.entries(document.numeric ?? {})) {
        const perDoc = numericValues.get(field) ?? [];
        numericValues.set(field, perDoc);
        perDoc[doc] = [...values].sort((a, b) => a - b);
      }
    });
    for (const [field, perDoc] of keywordValues) {
      const sorted = [...new Set(perDoc.flat())].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const ordinals = perDoc.map((values) => (values ?? []).map((value) => sorted.indexOf(value)).sort((a, b) => a - b));
      this.keyword.set(field, new TestKeywordColumn(sorted, ordinals));
    }
    for (const [field, perDoc] of numericValues) this.numeric.set(field, new TestNumericColumn(perDoc));
    for (const field of inplaceFields) if (!this.numeric.has(field)) this.numeric.set(field, new TestNumericColumn([]));
  }

  private field(name: string, positions: boolean): TestField {
    let entry = this.fields.get(name);
    if (!entry) {
      entry = { positions, terms: new Map(), norms: new Map(), stats: { docCount: 0, sumTotalTermFreq: 0 } };
      this.fields.set(name, entry);
    }
    return entry;
  }

  numLiveDocs(): number {
    return this.live.filter(Boolean).length;
  }

  isLive(doc: number): boolean {
    return this.live[doc] === true;
  }

  /** Marks a doc deleted. */
  deleteDoc(doc: number): boolean {
    const wasLive = this.live[doc] === true;
    this.live[doc] = false;
    return wasLive;
  }

  indexedFields(): string[] {
    return [...this.fields.keys()];
  }

  postings(field: string, term: string): PostingsCursor | null {
    const entry = this.fields.get(field);
    const list = entry?.terms.get(term);
    return entry && list ? new TestPostingsCursor(list, entry.norms) : null;
  }

  docFreq(field: string, term: string): number {
    return this.fields.get(field)?.terms.get(term)?.length ?? 0;
  }

  /** Sorted terms of a field (fixture helper). */
  sortedTerms(field: string): string[] {
    return [...(this.fields.get(field)?.terms.keys() ?? [])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  terms(field: string, from?: string): TermsIterator {
    const sorted = this.sortedTerms(field).filter((term) => from === undefined || term >= from);
    let position = -1;
    return {
      next: () => sorted[++position] ?? null,
      docFreq: () => this.docFreq(field, sorted[position]!),
      postings: () => this.postings(field, sorted[position]!)!,
    };
  }

  hasPositions(field: string): boolean {
    return this.fields.get(field)?.positions ?? false;
  }

  norm(field: string, doc: number): number {
    return this.fields.get(field)?.norms.get(doc) ?? 0;
  }

  fieldStats(field: string): FieldStats {
    return { ...(this.fields.get(field)?.stats ?? { docCount: 0, sumTotalTermFreq: 0 }) };
  }

  numericFields(): string[] {
    return [...this.numeric.keys()];
  }

  numericColumn(field: string): NumericColumn | null {
    return this.numeric.get(field) ?? null;
  }

  numericRangeIndex(_field: string): NumericRangeIndex | null {
    return null;
  }

  inplaceColumn(field: string): InplaceColumn | null {
    return this.inplaceFields.includes(field) ? (this.numeric.get(field) ?? null) : null;
  }

  keywordFields(): string[] {
    return [...this.keyword.keys()];
  }

  keywordColumn(field: string): KeywordColumn | null {
    return this.keyword.get(field) ?? null;
  }

  source(doc: number): Buffer {
    const document = this.docs[doc]!;
    if (document.source instanceof Uint8Array) return Buffer.from(document.source);
    return Buffer.from(JSON.stringify(document.source ?? { id: document.id }));
  }

  meta(doc: number): DocMeta {
    const document = this.docs[doc]!;
    return {
      id: document.id,
      seqNo: document.seqNo ?? doc,
      version: document.version ?? 1,
      primaryTerm: document.primaryTerm ?? 1,
    };
  }
  metaNumbers(doc: number): DocNumbers {
    const { seqNo, version, primaryTerm } = this.meta(doc);
    return { seqNo, version, primaryTerm };
  }


  lookupId(id: string): number {
    return this.docsById.get(id)?.find((doc) => this.live[doc]) ?? -1;
  }
}

/** How the segment tests write the fields of `generateTestDocs` documents. */
export const TEST_FIELDS: SegmentFieldInfo[] = [
  { name: 'body', kind: 'text', positions: true },
  { name: 'title', kind: 'text', positions: true },
  { name: 'tag', kind: 'keyword', positions: false },
  { name: 'status', kind: 'keyword', positions: false },
  { name: 'price', kind: 'numeric', positions: false },
  { name: 'sizes', kind: 'numeric', positions: false },
  { name: 'views', kind: 'numeric', positions: false, inplace: true },
];

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), 1 | state);
    mixed = (mixed + Math.imul(mixed ^ (mixed >>> 7), 61 | mixed)) ^ mixed;
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/** Terms that sort differently in UTF-16 and UTF-8 byte order, to catch ordering mistakes. */
const UNUSUAL_TERMS = ['é', 'éa', '😀', '\uE000', '\uFFFD', 'ß', '東京'];

/**
 * Generates fixture docs: text fields `body` (skewed vocabulary, some long docs) and `title`,
 * keyword `tag` (multi-valued) and `status`, numeric `price`, `sizes` (multi-valued), `views`.
 */
export function generateTestDocs(count: number, seed: number, idPrefix = 'doc'): TestDoc[] {
  const random = seededRandom(seed);
  const word = (): string => {
    if (random() < 0.02) return UNUSUAL_TERMS[Math.floor(random() * UNUSUAL_TERMS.length)]!;
    return `w${Math.floor(400 * random() ** 3)}`;
  };
  const docs: TestDoc[] = [];
  for (let n = 0; n < count; n++) {
    const bodyLength = random() < 0.1 ? 100 + Math.floor(random() * 300) : Math.floor(random() * 40);
    const tags = Array.from({ length: Math.floor(random() * 4) }, () => `tag${Math.floor(random() * 30)}`);
    const doc: TestDoc = {
      id: random() < 0.05 ? `${idPrefix}-ü-${n}` : `${idPrefix}-${n}`,
      text: {
        body: Array.from({ length: bodyLength }, word),
        title: Array.from({ length: Math.floor(random() * 6) }, word),
      },
      keyword: { tag: tags, ...(random() < 0.8 ? { status: [`s${Math.floor(random() * 5)}`] } : {}) },
      numeric: {
        ...(random() < 0.9 ? { price: [Math.round(random() * 10000) / 100] } : {}),
        sizes: Array.from({ length: Math.floor(random() * 3) }, () => Math.floor(random() * 50)),
        ...(random() < 0.7 ? { views: [Math.floor(random() * 1000)] } : {}),
      },
      source: { n, note: `document number ${n}`, filler: 'x'.repeat(Math.floor(random() * 200)) },
      seqNo: 1000 + n,
      version: 1 + Math.floor(random() * 3),
      primaryTerm: 1,
    };
    docs.push(doc);
  }
  return docs;
}
