/**
 * Field overlays of one leaf (a segment or the mutable layer): the field-level updates of its
 * documents, kept beside the leaf's own data until an epoch or merge rewrites the documents.
 *
 * A document's overlay is the JSON text of each top-level field an update replaced (null: gone).
 * Every mapped field under those keys is "replaced" for the doc: the leaf's own postings, norms
 * and column values of the doc are skipped, and the overlay's are read instead (overlay-views.ts).
 * Statistics stay those of a fresh index: a replaced doc's old contribution to doc freqs and
 * field lengths (read from the leaf's own source, analysed once) is subtracted and the overlay's
 * added. Inplace fields are written to their columns instead. The cost of applying an update is
 * the size of the fields it replaces; no other field of the document is read or analysed.
 */
import { EngineError } from '../errors.ts';
import type { FlatField } from '../mapping/mapping.ts';
import { parseDocument, type ParsedDocument } from '../mapping/parse-document.ts';
import type { FieldStats, InplaceColumn, KeywordColumn, NumericColumn, NumericRangeIndex, PostingsCursor, TermsIterator } from '../segment/leaf-reader.ts';
import { encodeNorm } from '../segment/norms.ts';
import { DenseNumericColumn } from '../segment/numeric-columns.ts';
import { spliceSource } from '../update/source-splice.ts';
import { compareTerms } from './mutable-segment.ts';
import { mergedTerms, OverlaidPostingsCursor, OverlaidRangeIndex, overlaidDenseColumn, overlaidKeywordColumn, overlaidNumericColumn, type OverlayTerms } from './overlay-views.ts';
import { ByteVector } from './growable.ts';
import { analyzeTextValues } from './text-terms.ts';

/** What an overlay reads of its leaf's own (not overlaid) data. */
export interface OverlayBase {
  /** The JSON texts of the named top-level fields of the doc's stored source as the leaf wrote it (the source's other fields need not be read). */
  topLevelTexts(doc: number, keys: readonly string[]): Map<string, string>;
  /** The leaf's own norm byte of a doc's field. */
  norm(field: string, doc: number): number;
  /** The leaf's own keyword column of a field. */
  keywordColumn(field: string): KeywordColumn | null;
  /** The leaf's inplace column of a field (overlay values of inplace fields go there). */
  inplaceColumn(field: string): InplaceColumn | null;
}

type FieldKind = 'text' | 'keyword' | 'numeric';

/** The overlay of one field: its replaced docs, their values, and the statistics correction. */
interface OverlayField {
  kind: FieldKind;
  /** Replaced doc → its current value (undefined: the doc no longer holds the field). */
  terms: Map<number, OverlayTerms | undefined>;
  numbers: Map<number, number[] | undefined>;
  keywords: Map<number, string[] | undefined>;
  /** Byte per doc: 1 when the doc's field is replaced (the keys of `terms` or `numbers`). */
  replaced: ByteVector;
  /** Term → overlay docs holding it. */
  termDocs: Map<string, Set<number>>;
  /** Doc freq the replaced docs' old values gave each term in the leaf. */
  removedDocFreq: Map<string, number>;
  /** Statistics delta: new minus old contributions of the replaced docs. */
  docCountDelta: number;
  lengthDelta: number;
  /** Caches, dropped on every change of the field. */
  sortedTerms: string[] | null;
  sortedDocs: Map<string, OverlayTermDocs>;
  norms: { base: Uint8Array | null; view: Uint8Array } | null;
  keywordView: { base: KeywordColumn | null; view: KeywordColumn } | null;
  numericView: { base: NumericColumn | null; view: NumericColumn } | null;
  rangeView: { base: NumericRangeIndex; view: NumericRangeIndex } | null;
}

/** One doc's overlay: the replaced top-level fields' texts and the field paths they cover. */
interface DocOverlay {
  texts: Map<string, string | null>;
  paths: Set<string>;
}

/** The overlay docs holding a term, ascending, with their largest frequency and smallest norm. */
interface OverlayTermDocs {
  docs: number[];
  maxFreq: number;
  minNorm: number;
}

/**
 * See the module comment. Every change makes a new version; `snapshot` gives the version's frozen
 * copy, made once per version and shared by every reader of it, whose read views (sorted postings,
 * norms, keyword, numeric and range views) are materialised on first use and kept.
 */
export class FieldOverlay {
  private readonly docs = new Map<number, DocOverlay>();
  private readonly fields = new Map<string, OverlayField>();
  /** The last `baseTexts` answer (the leaf's own text of a doc never changes). */
  private lastBaseRead: { doc: number; keys: Set<string>; texts: Map<string, string> } | null = null;
  /** Top-level keys each doc's own stored source was found to lack (it never changes). */
  private readonly absentKeys = new Map<number, Set<string>>();
  /** Approximate bytes held, for the epoch size threshold. */
  bytes = 0;
  /** Changes applied so far: equal versions of one overlay hold the same state. */
  private changes = 0;
  /** The frozen copy of the current version, once asked for (dropped by the next change). */
  private frozenCopy: FieldOverlay | null = null;

  constructor(
    private readonly base: OverlayBase,
    /** Whether this is a frozen copy (see `snapshot`): it never changes. */
    private readonly frozen = false,
  ) {}

  /** The overlay's version: it changes with every update applied, and only then. */
  get version(): number {
    return this.changes;
  }

  /** Whether any document of the leaf has an overlay. */
  get size(): number {
    return this.docs.size;
  }

  /** Whether a field has replaced docs in this leaf. */
  touches(field: string): boolean {
    return this.fields.size > 0 && this.fields.has(field);
  }

  /** Docs with an overlay and their replaced top-level texts (for persistence and carry-over; a doc's map is replaced, never changed, by an update). */
  entries(): IterableIterator<[number, ReadonlyMap<string, string | null>]> {
    const docs = this.docs;
    return (function* () {
      for (const [doc, overlay] of docs) yield [doc, overlay.texts] as [number, ReadonlyMap<string, string | null>];
    })();
  }

  /**
   * The current state as a copy later updates do not change (what snapshots, epochs and merges
   * read, see `frozenOverlayView`). Costs the size of the overlay once per version: every caller
   * until the next change gets the same copy, with the views earlier readers materialised.
   */
  snapshot(): FieldOverlay {
    if (this.frozen) return this;
    if (this.frozenCopy === null) this.frozenCopy = this.copy();
    return this.frozenCopy;
  }

  private copy(): FieldOverlay {
    const copy = new FieldOverlay(this.base, true);
    copy.changes = this.changes;
    for (const [doc, overlay] of this.docs) copy.docs.set(doc, overlay);
    for (const [name, field] of this.fields) {
      copy.fields.set(name, {
        ...field,
        terms: new Map(field.terms),
        numbers: new Map(field.numbers),
        keywords: new Map(field.keywords),
        replaced: copyBytes(field.replaced),
        termDocs: new Map([...field.termDocs].map(([term, docs]) => [term, new Set(docs)])),
        removedDocFreq: new Map(field.removedDocFreq),
        sortedTerms: null,
        sortedDocs: new Map(),
        norms: null,
        keywordView: null,
        numericView: null,
        rangeView: null,
      });
    }
    copy.bytes = this.bytes;
    return copy;
  }

  /**
   * The JSON texts of the named top-level fields as the leaf's own stored source holds them (a
   * large segment doc's other fields are not read); keys found missing are remembered, so that an
   * update naming a field the document lacks (an unset, a rename source) reads the source once.
   */
  baseTexts(doc: number, keys: readonly string[]): Map<string, string> {
    const absent = this.absentKeys.get(doc);
    const wanted = absent ? keys.filter((key) => !absent.has(key)) : keys;
    if (wanted.length === 0) return new Map();
    // An update reads the fields, then applies them: the second read is answered from the first.
    const last = this.lastBaseRead;
    if (last?.doc === doc && wanted.every((key) => last.keys.has(key))) {
      return new Map(wanted.filter((key) => last.texts.has(key)).map((key) => [key, last.texts.get(key)!]));
    }
    const found = this.base.topLevelTexts(doc, wanted);
    this.lastBaseRead = { doc, keys: new Set(wanted), texts: found };
    for (const key of wanted) {
      if (found.has(key)) continue;
      let missing = this.absentKeys.get(doc);
      if (!missing) this.absentKeys.set(doc, (missing = new Set()));
      missing.add(key);
    }
    return found;
  }

  /** The replaced top-level texts of a doc, or undefined. */
  textsOf(doc: number): ReadonlyMap<string, string | null> | undefined {
    return this.docs.get(doc)?.texts;
  }

  /**
   * Replaces top-level fields of a doc (texts: JSON text, or null for a removed field). Throws
   * mapper_parsing before changing anything when a value does not fit the mapping. With
   * `writeInplace`, the inplace fields under `texts` get their column slots set from them (an
   * update); without, columns are left alone (re-applying persisted overlays, whose texts may hold
   * inplace values older than the columns: an inplace update writes only the column).
   */
  apply(doc: number, texts: ReadonlyMap<string, string | null>, mapping: ReadonlyMap<string, FlatField>, strictNumbers: boolean, writeInplace = true): void {
    if (this.frozen) throw new Error('a frozen field overlay is read-only');
    const previous = this.docs.get(doc);
    const merged = new Map(previous?.texts);
    for (const [key, text] of texts) merged.set(key, text);
    // Field paths under different top-level keys are disjoint (overlay keys never hold a dot, see
    // shard/field-update.ts): only the paths under this update's keys are parsed and set again.
    const parsed = parseDocument(objectOf(texts), mapping, { strictNumbers });
    const inplace = [...mapping.values()].filter((field) => field.inplace && coveredBy(field.path, texts));
    for (const field of inplace) {
      if ((parsed.numeric.get(field.path)?.length ?? 0) > 1) {
        throw new EngineError('mapper_parsing', `field [${field.path}] is inplace and takes a single value, got an array`);
      }
    }
    const paths = new Set(previous?.paths);
    const newKeys = [...texts.keys()].filter((key) => !previous?.texts.has(key));
    if (newKeys.length > 0) {
      const baseTexts = this.baseTexts(doc, newKeys);
      const baseParsed = parseDocument(objectOf(baseTexts), mapping, { strictNumbers: false });
      for (const [path, kind] of kindsOf(baseParsed)) {
        if (paths.has(path) || isInplace(mapping, path)) continue;
        paths.add(path);
        this.removeBase(doc, path, kind, baseParsed, mapping);
      }
    }
    for (const [path, kind] of kindsOf(parsed)) {
      if (paths.has(path) || isInplace(mapping, path)) continue;
      paths.add(path);
      this.fieldOf(path, kind);
      this.markReplaced(doc, path);
    }
    for (const path of paths) if (texts.has(topKey(path))) this.setValue(doc, path, parsed, mapping);
    if (writeInplace) for (const field of inplace) this.base.inplaceColumn(field.path)?.set(doc, parsed.numeric.get(field.path)?.[0] ?? NaN);
    for (const text of texts.values()) this.bytes += (text?.length ?? 0) + 32;
    this.docs.set(doc, { texts: merged, paths });
    this.changes++;
    this.frozenCopy = null;
  }

  /** The doc's source: the leaf's text with the replaced top-level fields spliced in. */
  source(doc: number, base: Buffer): Buffer {
    const overlay = this.docs.get(doc);
    return overlay ? spliceSource(base, overlay.texts) : base;
  }

  /** Fields this overlay indexes (text and keyword). */
  indexedFields(): string[] {
    return [...this.fields].filter(([, field]) => field.kind !== 'numeric').map(([name]) => name);
  }

  /** Fields with overlay numeric values. */
  numericFields(): string[] {
    return [...this.fields].filter(([, field]) => field.kind === 'numeric').map(([name]) => name);
  }

  /** Fields with overlay keyword values. */
  keywordFields(): string[] {
    return [...this.fields].filter(([, field]) => field.kind === 'keyword').map(([name]) => name);
  }

  /** Whether the overlay indexes positions for the field. */
  hasPositions(field: string): boolean {
    return this.fields.get(field)?.kind === 'text';
  }

  /** Doc freq of a term given the leaf's own. */
  docFreq(field: string, term: string, baseDocFreq: number): number {
    const overlay = this.fields.get(field)!;
    return baseDocFreq - (overlay.removedDocFreq.get(term) ?? 0) + (overlay.termDocs.get(term)?.size ?? 0);
  }

  /** Postings of a term given the leaf's own cursor; null when no doc holds the term. */
  postings(field: string, term: string, base: PostingsCursor | null): PostingsCursor | null {
    const overlay = this.fields.get(field)!;
    const docFreq = this.docFreq(field, term, base?.docFreq ?? 0);
    if (docFreq <= 0) return null;
    let held = overlay.sortedDocs.get(term);
    if (!held) {
      const docs = [...(overlay.termDocs.get(term) ?? [])].sort((a, b) => a - b);
      let maxFreq = 0;
      let minNorm = 255;
      for (const doc of docs) {
        const value = overlay.terms.get(doc)!;
        maxFreq = Math.max(maxFreq, value.terms.get(term)?.length ?? 1);
        minNorm = Math.min(minNorm, value.norm);
      }
      held = { docs, maxFreq, minNorm };
      overlay.sortedDocs.set(term, held);
    }
    return new OverlaidPostingsCursor(base, overlay.replaced.data, held.docs, held.maxFreq, held.minNorm, overlay.terms, term, docFreq);
  }

  /** Sorted terms given the leaf's own iterator. */
  terms(field: string, base: TermsIterator, from?: string): TermsIterator {
    const overlay = this.fields.get(field)!;
    overlay.sortedTerms ??= [...overlay.termDocs.keys()].sort(compareTerms);
    return mergedTerms(
      base,
      overlay.sortedTerms,
      (term, baseDocFreq) => this.docFreq(field, term, baseDocFreq),
      (term, cursor) => this.postings(field, term, cursor),
      from,
    );
  }

  /** Norm of a doc's field given the leaf's own. */
  norm(field: string, doc: number, baseNorm: number): number {
    const overlay = this.fields.get(field)!;
    if (doc >= overlay.replaced.length || overlay.replaced.data[doc] !== 1) return baseNorm;
    return overlay.terms.get(doc)?.norm ?? 0;
  }

  /**
   * Norm bytes of a field given the leaf's own (`base`, one byte per doc, covering every doc):
   * a copy with the replaced docs' norms written in, made once per version of the field.
   */
  norms(field: string, base: Uint8Array | null, maxDoc: number): Uint8Array {
    const overlay = this.fields.get(field)!;
    if (overlay.norms?.base === base) return overlay.norms.view;
    const view = new Uint8Array(maxDoc);
    if (base) view.set(base.subarray(0, maxDoc));
    const replaced = overlay.replaced.data;
    for (const [doc, value] of overlay.terms) if (doc < maxDoc && replaced[doc] === 1) view[doc] = value?.norm ?? 0;
    overlay.norms = { base, view };
    return view;
  }

  /** Field statistics given the leaf's own. */
  fieldStats(field: string, base: FieldStats): FieldStats {
    const overlay = this.fields.get(field)!;
    return { docCount: base.docCount + overlay.docCountDelta, sumTotalTermFreq: base.sumTotalTermFreq + overlay.lengthDelta };
  }

  /**
   * Numeric column given the leaf's own (cached until the field changes). Over a segment's
   * single-valued column, with single overlay values, it is a copy of the column with the replaced
   * docs' values written in, read as fast as the leaf's own.
   */
  numericColumn(field: string, base: NumericColumn | null): NumericColumn | null {
    const overlay = this.fields.get(field)!;
    if (overlay.kind !== 'numeric') return base;
    if (overlay.numericView?.base !== base) {
      const view = base instanceof DenseNumericColumn ? overlaidDenseColumn(base, overlay.replaced.data, overlay.numbers) : null;
      overlay.numericView = { base, view: view ?? overlaidNumericColumn(base, overlay.replaced.data, overlay.numbers) };
    }
    return overlay.numericView.view;
  }

  /** Range index given the leaf's own (cached until the field changes); null without one. */
  rangeIndex(field: string, base: NumericRangeIndex | null): NumericRangeIndex | null {
    const overlay = this.fields.get(field)!;
    if (base === null || overlay.kind !== 'numeric') return base;
    if (!overlay.rangeView || overlay.rangeView.base !== base) overlay.rangeView = { base, view: new OverlaidRangeIndex(base, overlay.replaced.data, overlay.numbers) };
    return overlay.rangeView.view;
  }

  /** Keyword column given the leaf's own (cached until the field changes). */
  keywordColumn(field: string, base: KeywordColumn | null): KeywordColumn | null {
    const overlay = this.fields.get(field)!;
    if (overlay.kind !== 'keyword') return base;
    if (!overlay.keywordView || overlay.keywordView.base !== base) {
      overlay.keywordView = { base, view: overlaidKeywordColumn(base, overlay.replaced.data, overlay.keywords) };
    }
    return overlay.keywordView.view;
  }

  private fieldOf(path: string, kind: FieldKind): OverlayField {
    let field = this.fields.get(path);
    if (!field) {
      field = {
        kind,
        terms: new Map(),
        numbers: new Map(),
        keywords: new Map(),
        replaced: new ByteVector(64),
        termDocs: new Map(),
        removedDocFreq: new Map(),
        docCountDelta: 0,
        lengthDelta: 0,
        sortedTerms: null,
        sortedDocs: new Map(),
        norms: null,
        keywordView: null,
        numericView: null,
        rangeView: null,
      };
      this.fields.set(path, field);
    }
    return field;
  }

  private markReplaced(doc: number, path: string): void {
    const field = this.fields.get(path)!;
    field.replaced.ensure(doc + 1);
    field.replaced.data[doc] = 1;
    if (field.kind === 'numeric') field.numbers.set(doc, undefined);
    else field.terms.set(doc, undefined);
    if (field.kind === 'keyword') field.keywords.set(doc, undefined);
  }

  /** Subtracts the leaf's own value of a doc's field from the statistics (first replacement only). */
  private removeBase(doc: number, path: string, kind: FieldKind, parsed: ParsedDocument, mapping: ReadonlyMap<string, FlatField>): void {
    const field = this.fieldOf(path, kind);
    this.markReplaced(doc, path);
    if (kind === 'numeric') return;
    const indexed = kind === 'text' ? this.base.norm(path, doc) > 0 : (this.base.keywordColumn(path)?.count(doc) ?? 0) > 0;
    if (!indexed) return;
    const value = termsOf(path, kind, parsed, mapping);
    if (!value) return;
    field.docCountDelta--;
    field.lengthDelta -= value.length;
    for (const term of value.terms.keys()) field.removedDocFreq.set(term, (field.removedDocFreq.get(term) ?? 0) + 1);
    field.sortedTerms = null;
  }

  /** Sets a replaced doc's overlay value of one field from the parsed overlay texts. */
  private setValue(doc: number, path: string, parsed: ParsedDocument, mapping: ReadonlyMap<string, FlatField>): void {
    const field = this.fields.get(path)!;
    field.sortedDocs.clear();
    field.norms = null;
    field.keywordView = null;
    if (field.kind === 'numeric') {
      field.numericView = null;
      field.rangeView = null;
      const values = parsed.numeric.get(path);
      field.numbers.set(doc, values && values.length > 0 ? [...values].sort((a, b) => a - b) : undefined);
      return;
    }
    const old = field.terms.get(doc);
    if (old) {
      field.docCountDelta--;
      field.lengthDelta -= field.kind === 'text' ? lengthOf(old) : 1;
      for (const term of old.terms.keys()) {
        const docs = field.termDocs.get(term)!;
        docs.delete(doc);
        if (docs.size === 0) {
          field.termDocs.delete(term);
          field.sortedTerms = null;
        }
      }
    }
    const value = termsOf(path, field.kind, parsed, mapping);
    field.terms.set(doc, value?.overlay);
    if (field.kind === 'keyword') {
      const keywords = parsed.keyword.get(path);
      field.keywords.set(doc, keywords && keywords.length > 0 ? keywords : undefined);
    }
    if (!value) return;
    field.docCountDelta++;
    field.lengthDelta += value.length;
    for (const term of value.terms.keys()) {
      let docs = field.termDocs.get(term);
      if (!docs) {
        field.termDocs.set(term, (docs = new Set()));
        field.sortedTerms = null;
      }
      docs.add(doc);
    }
  }
}

/** A field's indexed terms from parsed values (null when it indexes nothing), its length and overlay form. */
function termsOf(
  path: string,
  kind: FieldKind,
  parsed: ParsedDocument,
  mapping: ReadonlyMap<string, FlatField>,
): { terms: Map<string, number[] | null>; length: number; overlay: OverlayTerms } | null {
  if (kind === 'text') {
    const { termPositions, tokenCount } = analyzeTextValues(parsed.text.get(path) ?? [], mapping.get(path)?.analyzer ?? 'standard');
    if (tokenCount === 0) return null;
    const terms = termPositions as Map<string, number[] | null>;
    return { terms, length: tokenCount, overlay: { terms, norm: encodeNorm(tokenCount) } };
  }
  const values = parsed.keyword.get(path) ?? [];
  if (values.length === 0) return null;
  const terms = new Map<string, number[] | null>(values.map((value) => [value, null]));
  return { terms, length: 1, overlay: { terms, norm: 1 } };
}

function copyBytes(vector: ByteVector): ByteVector {
  const copy = new ByteVector(vector.data.length);
  copy.data.set(vector.data);
  copy.length = vector.length;
  return copy;
}

function lengthOf(value: OverlayTerms): number {
  let length = 0;
  for (const positions of value.terms.values()) length += positions?.length ?? 1;
  return length;
}

/** Each path the parsed values hold, with how it is indexed. */
function kindsOf(parsed: ParsedDocument): Array<[string, FieldKind]> {
  return [
    ...[...parsed.text.keys()].map((path): [string, FieldKind] => [path, 'text']),
    ...[...parsed.keyword.keys()].map((path): [string, FieldKind] => [path, 'keyword']),
    ...[...parsed.numeric.keys()].map((path): [string, FieldKind] => [path, 'numeric']),
  ];
}

function isInplace(mapping: ReadonlyMap<string, FlatField>, path: string): boolean {
  return mapping.get(path)?.inplace === true;
}

/** The top-level key a field path lies under (a hidden companion, `<path>\0<suffix>`, lies under its field's key). */
function topKey(path: string): string {
  const dot = path.indexOf('.');
  const companion = path.indexOf('\u0000');
  const end = dot < 0 ? companion : companion < 0 ? dot : Math.min(dot, companion);
  return end < 0 ? path : path.slice(0, end);
}

/** Whether one of the top-level keys covers the field path. */
function coveredBy(path: string, keys: ReadonlyMap<string, unknown>): boolean {
  for (const key of keys.keys()) if (path === key || path.startsWith(`${key}.`)) return true;
  return false;
}

/** The object of the present top-level fields. */
function objectOf(texts: ReadonlyMap<string, string | null>): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (const [key, text] of texts) {
    if (text !== null) Object.defineProperty(object, key, { value: JSON.parse(text), enumerable: true, writable: true, configurable: true });
  }
  return object;
}

/** The view `frozenOverlayView` made of each frozen copy (one leaf, one overlay version). */
const frozenViews = new WeakMap<FieldOverlay, object>();

/**
 * A read view of a leaf whose field overlays are frozen as they are now, for a snapshot, epoch or
 * merge that reads the leaf over many turns while updates go on: every other read passes to the
 * leaf. Until the overlay changes, every caller gets the same view (and the views it cached).
 */
export function frozenOverlayView<T extends { readonly overlay: FieldOverlay }>(leaf: T): T {
  const overlay = leaf.overlay.snapshot();
  const cached = frozenViews.get(overlay);
  if (cached !== undefined && Object.getPrototypeOf(cached) === leaf) return cached as T;
  const view = Object.create(leaf) as T;
  Object.defineProperty(view, 'overlay', { value: overlay });
  frozenViews.set(overlay, view);
  return view;
}
