/**
 * SegmentReader: the LeafReader of an immutable on-disk segment. Opening loads norms, columns and
 * doc meta into memory (each verified whole) and the term dictionary's field directory; term
 * blocks and postings (format 6 on) stay on disk and are read page by page through the thread's
 * bounded page cache, each page verified by its checksum when read (paged-file.ts); stored
 * sources stay on disk. Deletions, inplace values and per-doc seq_no/version are the only
 * mutable state; the shard persists them as generation files through `writeLiveDocs`,
 * `writeInplaceColumn` and `writeMeta`.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import type {
  DocMeta,
  DocNumbers,
  FieldStats,
  InplaceColumn,
  KeywordColumn,
  LeafReader,
  NumericColumn,
  NumericRangeIndex,
  PostingsCursor,
  TermsIterator,
} from './leaf-reader.ts';
import { EngineError } from '../errors.ts';
import {
  FileMagic,
  HEADER_BYTES,
  SegmentFileName,
  corruptFile,
  isSupportedFormatVersion,
  fsyncDirectory,
  readVerifiedFile,
} from './segment-file.ts';
import type { SegmentMeta } from './segment-writer.ts';
import { readTermDictionaries, type FieldTermDictionary } from './term-dictionary-reader.ts';
import { openSegmentDataFile, type SegmentDataFile } from './paged-file.ts';
import { BLOCK_IMPACTS_FORMAT_VERSION, BLOCK_COUNTS_FORMAT_VERSION, POSITION_LENGTHS_FORMAT_VERSION } from './postings-cursor.ts';
import { readNorms, type FieldNorms } from './norms-store.ts';
import { readNumericColumns, SegmentInplaceColumn } from './numeric-columns.ts';
import { readNumericRangeIndexes, type SegmentRangeIndex } from './numeric-range-index.ts';
import { KeywordColumnsFile } from './keyword-columns.ts';
import { StoredSourceReader } from './stored-source.ts';
import { DocMetaStore, metaFileName, readMetaGenerationFile, writeMetaGenerationFile } from './doc-meta-store.ts';
import { LiveDocs, liveDocsFileName, readLiveDocsFile, writeLiveDocsFile } from './live-docs.ts';
import { inplaceFileName, parseInplaceFileName, readInplaceFile, writeInplaceFile } from './inplace-file.ts';
import { overlayFileName, readOverlayFile, writeOverlayFile } from './overlay-file.ts';
import { FieldOverlay } from '../mutable/field-overlay.ts';
import type { FlatField } from '../mapping/mapping.ts';

/** Which generation files of a segment are current (recorded in the shard manifest). */
export interface SegmentGenerations {
  liveDocsGen: number;
  inplaceGens: Record<string, number>;
  /** Generation of the seq_no/version file `meta.<gen>` (0 or absent: as written). */
  metaGen?: number;
  /** Generation of the field overlay file `overlay.<gen>` (0 or absent: none). */
  overlayGen?: number;
}

/** The current generation of a field's inplace column (0: as written); field names such as `toString` are own keys only. */
export function inplaceGeneration(gens: Readonly<Record<string, number>>, field: string): number {
  return Object.hasOwn(gens, field) ? gens[field]! : 0;
}

const EMPTY_TERMS: TermsIterator = {
  next: () => null,
  docFreq: () => 0,
  postings: () => {
    throw new RangeError('no current term');
  },
};

/** Runs a parser over a loaded file, turning format errors into corrupt_index naming the file. */
function parseFile<T>(filePath: string, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (error instanceof EngineError) throw error;
    throw corruptFile(filePath, (error as Error).message);
  }
}

/** Reader of one immutable segment. */
export class SegmentReader implements LeafReader {
  readonly name: string;
  readonly maxDoc: number;
  private readonly numericColumns = new Map<string, NumericColumn>();
  private readonly inplaceColumns = new Map<string, SegmentInplaceColumn>();
  private rangeIndexes = new Map<string, SegmentRangeIndex>();
  private readonly dirtyInplaceFields = new Set<string>();
  private readonly generationBytes = new Map<string, number>();
  private liveDocsDirty = false;
  private metaDirty = false;
  private overlayDirty = false;
  /** The norm bytes `norm` last read: of `normField` with the overlay at `normVersion` laid over. */
  private normField: string | null = null;
  private normVersion = -1;
  private normBytes: Uint8Array | null = null;
  private closed = false;

  private constructor(
    readonly dir: string,
    /** The meta this reader was opened with (as the shard manifest records it). */
    readonly segmentMeta: SegmentMeta,
    private readonly dictionaries: Map<string, FieldTermDictionary>,
    private readonly norms: Map<string, FieldNorms>,
    private readonly keywordColumns: KeywordColumnsFile,
    private readonly storedSource: StoredSourceReader,
    private readonly docMeta: DocMetaStore,
    private readonly liveDocs: LiveDocs,
    /** The term dictionary and postings files, closed with the reader. */
    private readonly dataFiles: SegmentDataFile[],
  ) {
    this.name = segmentMeta.name;
    this.maxDoc = segmentMeta.maxDoc;
    this.overlay = new FieldOverlay({
      topLevelTexts: (doc, keys) => this.storedSource.topLevelTexts(doc, keys),
      norm: (field, doc) => this.ownNorm(field, doc),
      keywordColumn: (field) => this.keywordColumns.column(field),
      inplaceColumn: (field) => this.inplaceColumns.get(field) ?? null,
    });
  }

  /** Field-level updates of this segment's documents not yet merged in (field-overlay.ts). */
  readonly overlay: FieldOverlay;

  /**
   * Opens a segment directory, verifying every file it loads (paged files: size, header and page
   * table; their pages when read); throws EngineError('corrupt_index') naming a bad file. Field
   * overlays (`state.overlayGen`) are re-applied with `fields`, the shard's mapping.
   */
  static open(dir: string, meta: SegmentMeta, state: SegmentGenerations, fields: ReadonlyMap<string, FlatField> = new Map()): SegmentReader {
    if (!isSupportedFormatVersion(meta.formatVersion)) {
      throw new EngineError('corrupt_index', `segment ${dir} has unsupported format version ${meta.formatVersion}`);
    }
    const maxDoc = meta.maxDoc;
    const load = (name: string, magic: string): { filePath: string; data: Uint8Array } => {
      const filePath = path.join(dir, name);
      return { filePath, data: readVerifiedFile(filePath, magic, meta.files[name]) };
    };
    const dataFiles: SegmentDataFile[] = [];
    const openData = (name: string, magic: string): SegmentDataFile => {
      const file = openSegmentDataFile(path.join(dir, name), magic, meta.files[name]);
      dataFiles.push(file);
      return file;
    };
    let dictionaries: Map<string, FieldTermDictionary>;
    try {
      const terms = openData(SegmentFileName.terms, FileMagic.terms);
      const streams = {
        docs: openData(SegmentFileName.postings, FileMagic.postings),
        positions: openData(SegmentFileName.positions, FileMagic.positions),
        positionLengths: meta.formatVersion >= POSITION_LENGTHS_FORMAT_VERSION,
        impacts: meta.formatVersion >= BLOCK_IMPACTS_FORMAT_VERSION,
        blockCounts: meta.formatVersion >= BLOCK_COUNTS_FORMAT_VERSION,
      };
      dictionaries = parseFile(terms.path, () => readTermDictionaries(terms, streams));
    } catch (error) {
      for (const file of dataFiles) file.close();
      throw error;
    }
    const closeData = <T>(step: () => T): T => {
      try {
        return step();
      } catch (error) {
        for (const file of dataFiles) file.close();
        throw error;
      }
    };
    const metaGen = state.metaGen ?? 0;
    const metaPath = path.join(dir, metaFileName(metaGen));
    const livePath = path.join(dir, liveDocsFileName(state.liveDocsGen));
    const { norms, numeric, keywordColumns, docMeta, liveDocs, storedSource } = closeData(() => {
      const normsFile = load(SegmentFileName.norms, FileMagic.norms);
      const norms = parseFile(normsFile.filePath, () => readNorms(normsFile.data, HEADER_BYTES, maxDoc));
      for (const [field, dictionary] of dictionaries) dictionary.norms = norms.get(field)?.norms ?? null;
      const numericFile = load(SegmentFileName.numericColumns, FileMagic.numericColumns);
      const numeric = parseFile(numericFile.filePath, () => readNumericColumns(numericFile.data, HEADER_BYTES, maxDoc));
      const keywordFile = load(SegmentFileName.keywordColumns, FileMagic.keywordColumns);
      const keywordColumns = parseFile(keywordFile.filePath, () => new KeywordColumnsFile(keywordFile.data, HEADER_BYTES, maxDoc));
      const docMetaFile = load(SegmentFileName.docMeta, FileMagic.docMeta);
      const docMeta = parseFile(docMetaFile.filePath, () => new DocMetaStore(docMetaFile.data, HEADER_BYTES, maxDoc));
      if (metaGen > 0) {
        docMeta.applyGeneration(readMetaGenerationFile(metaPath, maxDoc));
      }
      const liveDocs = parseFile(livePath, () => readLiveDocsFile(livePath, state.liveDocsGen, maxDoc));
      const sourcePath = path.join(dir, SegmentFileName.storedSource);
      const storedSource = parseFile(sourcePath, () => StoredSourceReader.open(sourcePath, meta.files[SegmentFileName.storedSource], maxDoc));
      return { norms, numeric, keywordColumns, docMeta, liveDocs, storedSource };
    });

    const reader = new SegmentReader(dir, meta, dictionaries, norms, keywordColumns, storedSource, docMeta, liveDocs, dataFiles);
    try {
      if (fs.existsSync(livePath)) reader.generationBytes.set('live', fs.statSync(livePath).size);
      if (metaGen > 0) reader.generationBytes.set('meta', fs.statSync(metaPath).size);
      for (const field of numeric) {
        if (!field.inplace) {
          reader.numericColumns.set(field.name, field.column);
          continue;
        }
        const inplacePath = path.join(dir, inplaceFileName(field.name, inplaceGeneration(state.inplaceGens, field.name)));
        const values = parseFile(inplacePath, () => readInplaceFile(inplacePath, maxDoc));
        const column = new SegmentInplaceColumn(field.name, values, reader.dirtyInplaceFields);
        reader.inplaceColumns.set(field.name, column);
        reader.numericColumns.set(field.name, column);
        reader.generationBytes.set(`inplace:${field.name}`, fs.statSync(inplacePath).size);
      }
      if (meta.formatVersion >= 2) {
        const rangeFile = load(SegmentFileName.numericRangeIndex, FileMagic.numericRangeIndex);
        reader.rangeIndexes = parseFile(rangeFile.filePath, () =>
          readNumericRangeIndexes(rangeFile.filePath, rangeFile.data, HEADER_BYTES, maxDoc, reader.numericColumns),
        );
      }
      const overlayGen = state.overlayGen ?? 0;
      if (overlayGen > 0) {
        const overlayPath = path.join(dir, overlayFileName(overlayGen));
        for (const [doc, texts] of parseFile(overlayPath, () => readOverlayFile(overlayPath, maxDoc))) {
          reader.overlay.apply(doc, texts, fields, false, false);
        }
        reader.generationBytes.set('overlay', fs.statSync(overlayPath).size);
      }
    } catch (error) {
      reader.close();
      throw error;
    }
    return reader;
  }

  numLiveDocs(): number {
    return this.liveDocs.liveCount;
  }

  isLive(doc: number): boolean {
    return this.liveDocs.isLive(doc);
  }

  indexedFields(): string[] {
    const own = [...this.dictionaries.keys()];
    return this.overlay.size === 0 ? own : [...new Set([...own, ...this.overlay.indexedFields()])];
  }

  postings(field: string, term: string): PostingsCursor | null {
    const dictionary = this.dictionaries.get(field);
    const pointer = dictionary?.lookup(term);
    const own = pointer ? dictionary!.cursor(pointer) : null;
    return this.overlay.touches(field) ? this.overlay.postings(field, term, own) : own;
  }

  docFreq(field: string, term: string): number {
    const own = this.dictionaries.get(field)?.lookup(term)?.docFreq ?? 0;
    return this.overlay.touches(field) ? this.overlay.docFreq(field, term, own) : own;
  }

  terms(field: string, from?: string): TermsIterator {
    const own = this.dictionaries.get(field)?.iterator(from) ?? EMPTY_TERMS;
    return this.overlay.touches(field) ? this.overlay.terms(field, own, from) : own;
  }

  hasPositions(field: string): boolean {
    return (this.dictionaries.get(field)?.hasPositions ?? false) || this.overlay.hasPositions(field);
  }

  norm(field: string, doc: number): number {
    // Scorers ask per doc: the field's bytes (overlaid ones materialised once per overlay version) are kept between calls.
    const overlay = this.overlay;
    if (field !== this.normField || overlay.version !== this.normVersion) {
      const own = this.norms.get(field)?.norms ?? null;
      this.normBytes = overlay.touches(field) ? overlay.norms(field, own, this.maxDoc) : own;
      this.normField = field;
      this.normVersion = overlay.version;
    }
    return this.normBytes === null ? 0 : this.normBytes[doc]!;
  }

  /** The norm bytes of a field for every doc (overlaid ones included), or null when it has none: what `norm` reads. */
  fieldNorms(field: string): Uint8Array | null {
    const own = this.norms.get(field)?.norms ?? null;
    return this.overlay.touches(field) ? this.overlay.norms(field, own, this.maxDoc) : own;
  }

  private ownNorm(field: string, doc: number): number {
    return this.norms.get(field)?.norms?.[doc] ?? 0;
  }

  fieldStats(field: string): FieldStats {
    const stats = this.norms.get(field)?.stats;
    const own = stats ? { docCount: stats.docCount, sumTotalTermFreq: stats.sumTotalTermFreq } : { docCount: 0, sumTotalTermFreq: 0 };
    return this.overlay.touches(field) ? this.overlay.fieldStats(field, own) : own;
  }

  numericFields(): string[] {
    const own = [...this.numericColumns.keys()];
    return this.overlay.size === 0 ? own : [...new Set([...own, ...this.overlay.numericFields()])];
  }

  numericColumn(field: string): NumericColumn | null {
    const own = this.numericColumns.get(field) ?? null;
    return this.overlay.touches(field) ? this.overlay.numericColumn(field, own) : own;
  }

  numericRangeIndex(field: string): NumericRangeIndex | null {
    const own = this.rangeIndexes.get(field) ?? null;
    return this.overlay.touches(field) ? this.overlay.rangeIndex(field, own) : own;
  }

  inplaceColumn(field: string): InplaceColumn | null {
    return this.inplaceColumns.get(field) ?? null;
  }

  keywordFields(): string[] {
    const own = this.keywordColumns.fields();
    return this.overlay.size === 0 ? own : [...new Set([...own, ...this.overlay.keywordFields()])];
  }

  keywordColumn(field: string): KeywordColumn | null {
    const own = this.keywordColumns.column(field);
    return this.overlay.touches(field) ? this.overlay.keywordColumn(field, own) : own;
  }

  source(doc: number): Buffer {
    const own = this.storedSource.source(doc);
    return this.overlay.size === 0 ? own : this.overlay.source(doc, own);
  }

  /** The stored sources as written, without field overlays (merges copy its blocks as they are). */
  storedSourceFile(): StoredSourceReader {
    return this.storedSource;
  }

  /** Replaces top-level fields of a doc (JSON text, null: removed) as a field overlay. Persist with `writeOverlay`. */
  applyFields(doc: number, texts: ReadonlyMap<string, string | null>, fields: ReadonlyMap<string, FlatField>, strictNumbers: boolean, writeInplace = true): void {
    this.overlay.apply(doc, texts, fields, strictNumbers, writeInplace);
    this.overlayDirty = true;
  }

  /** Whether `applyFields` was called since the last `writeOverlay`. */
  get dirtyOverlay(): boolean {
    return this.overlayDirty;
  }

  /** Writes every doc's overlay as generation `overlay.<gen>` (fsynced). */
  async writeOverlay(gen: number): Promise<void> {
    const entries = [...this.overlay.entries()].map(([doc, texts]): [number, ReadonlyMap<string, string | null>] => [doc, new Map(texts)]);
    this.overlayDirty = false;
    try {
      const written = await writeOverlayFile(path.join(this.dir, overlayFileName(gen)), entries);
      await fsyncDirectory(this.dir);
      this.generationBytes.set('overlay', written.bytes);
    } catch (error) {
      this.overlayDirty = true;
      throw error;
    }
  }

  meta(doc: number): DocMeta {
    return this.docMeta.meta(doc);
  }

  metaNumbers(doc: number): DocNumbers {
    return this.docMeta.numbers(doc);
  }

  /** The doc meta store, read directly by merges (sorted ids and numbers without a DocMeta per doc). */
  docMetaStore(): DocMetaStore {
    return this.docMeta;
  }

  lookupId(id: string): number {
    return this.docMeta.lookup(id, this.liveDocs);
  }

  /** Marks a doc deleted in memory; false when it already was. Persist with `writeLiveDocs`. */
  deleteDoc(doc: number): boolean {
    const deleted = this.liveDocs.delete(doc);
    if (deleted) this.liveDocsDirty = true;
    return deleted;
  }

  /** Overwrites a doc's seq_no, version and primary term in memory (inplace and field-level updates). Persist with `writeMeta`. */
  setMeta(doc: number, seqNo: number, version: number, primaryTerm: number): void {
    this.docMeta.setMeta(doc, seqNo, version, primaryTerm);
    this.metaDirty = true;
  }

  /** Whether `setMeta` was called since the last `writeMeta`. */
  get dirtyMeta(): boolean {
    return this.metaDirty;
  }

  /** Whether deletions happened since the last `writeLiveDocs`. */
  get dirtyLiveDocs(): boolean {
    return this.liveDocsDirty;
  }

  /** Inplace fields set since their last `writeInplaceColumn`. */
  get dirtyInplace(): ReadonlySet<string> {
    return this.dirtyInplaceFields;
  }

  /** Writes the current live docs as generation `live.<gen>` (fsynced) and clears the dirty flag. */
  async writeLiveDocs(gen: number): Promise<void> {
    const bits = this.liveDocs.bits.slice();
    this.liveDocsDirty = false;
    try {
      const written = await writeLiveDocsFile(path.join(this.dir, liveDocsFileName(gen)), bits, this.maxDoc);
      await fsyncDirectory(this.dir);
      this.generationBytes.set('live', written.bytes);
    } catch (error) {
      this.liveDocsDirty = true;
      throw error;
    }
  }

  /** Writes an inplace field's slots as generation `inplace.<field>.<gen>` (fsynced). */
  async writeInplaceColumn(field: string, gen: number): Promise<void> {
    const column = this.inplaceColumns.get(field);
    if (!column) throw new EngineError('illegal_argument', `field ${field} is not inplace in segment ${this.name}`);
    const values = column.values.slice();
    this.dirtyInplaceFields.delete(field);
    try {
      const written = await writeInplaceFile(path.join(this.dir, inplaceFileName(field, gen)), values);
      await fsyncDirectory(this.dir);
      this.generationBytes.set(`inplace:${field}`, written.bytes);
    } catch (error) {
      this.dirtyInplaceFields.add(field);
      throw error;
    }
  }

  /** Writes the current seq_nos and versions as generation `meta.<gen>` (fsynced). */
  async writeMeta(gen: number): Promise<void> {
    const snapshot = this.docMeta.snapshotMeta();
    this.metaDirty = false;
    try {
      const written = await writeMetaGenerationFile(path.join(this.dir, metaFileName(gen)), snapshot);
      await fsyncDirectory(this.dir);
      this.generationBytes.set('meta', written.bytes);
    } catch (error) {
      this.metaDirty = true;
      throw error;
    }
  }

  /** Deletes live-docs, inplace and meta generation files older than the ones `state` references. */
  async removeStaleGenerations(state: SegmentGenerations): Promise<void> {
    let removed = 0;
    for (const name of await fsp.readdir(this.dir)) {
      let stale = false;
      const live = /^live\.(\d+)$/.exec(name);
      if (live) stale = Number(live[1]) < state.liveDocsGen;
      const meta = /^meta\.(\d+)$/.exec(name);
      if (meta) stale = Number(meta[1]) < (state.metaGen ?? 0);
      const overlay = /^overlay\.(\d+)$/.exec(name);
      if (overlay) stale = Number(overlay[1]) < (state.overlayGen ?? 0);
      const inplace = parseInplaceFileName(name);
      if (inplace) stale = inplace.generation < inplaceGeneration(state.inplaceGens, inplace.field);
      if (!stale) continue;
      await fsp.rm(path.join(this.dir, name), { force: true });
      removed++;
    }
    if (removed > 0) await fsyncDirectory(this.dir);
  }

  /** Bytes of the immutable files plus the current generation files. */
  bytesOnDisk(): number {
    let bytes = 0;
    for (const file of Object.values(this.segmentMeta.files)) bytes += file.bytes;
    for (const size of this.generationBytes.values()) bytes += size;
    return bytes;
  }

  /** Releases the stored-source descriptor and the cached pages of the term dictionary and postings; the reader must not be used afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.storedSource.close();
    for (const file of this.dataFiles) file.close();
  }
}
