/**
 * The segment writer: epochs (mutable layer -> segment) and merges (segments -> segment) both
 * call `writeSegment` with a list of source leaves and their doc maps. Files are written into
 * `<dir>.tmp`, fsynced, and the directory is renamed to `<dir>` only when complete.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { LeafReader } from './leaf-reader.ts';
import { EngineError } from '../errors.ts';
import {
  FileMagic,
  OutputFile,
  SEGMENT_FORMAT_VERSION,
  SegmentFileName,
  fsyncDirectory,
  type FileChecksum,
} from './segment-file.ts';
import { WriteContext, type SegmentSource } from './write-context.ts';
import { writeInvertedIndex, type InvertedFieldSpec } from './inverted-writer.ts';
import { collectNorms, writeNorms } from './norms-store.ts';
import { collectNumericField, writeNumericColumns, NumericMode, type CollectedNumericField } from './numeric-columns.ts';
import { collectRangeIndex, writeNumericRangeIndex, type CollectedRangeIndex } from './numeric-range-index.ts';
import { collectKeywordField, writeKeywordColumns, type CollectedKeywordField } from './keyword-columns.ts';
import { StoredSourceWriter } from './stored-source.ts';
import { writeStoredSources } from './source-copy.ts';
import { writeDocMeta } from './doc-meta-store.ts';
import { collectDocMeta } from './doc-meta-collect.ts';
import { LiveDocs, liveDocsFileName, writeLiveDocsFile } from './live-docs.ts';
import { inplaceFileName, writeInplaceFile } from './inplace-file.ts';

export type { SegmentSource } from './write-context.ts';

/** How a field is written: text (inverted + positions + norms), keyword (inverted + ordinals), numeric (column). */
export interface SegmentFieldInfo {
  name: string;
  kind: 'text' | 'keyword' | 'numeric';
  /** Text fields: index positions. */
  positions: boolean;
  /** Numeric fields: store as a fixed-width inplace column. */
  inplace?: boolean;
  /** Numeric fields: write a range index (default true; inplace fields never have one). */
  rangeIndex?: boolean;
}

/** Input of `writeSegment`. */
export interface WriteSegmentOptions {
  /** Final directory of the segment; files go to `${dir}.tmp` first. */
  dir: string;
  /** Segment name, e.g. `seg_000012`. */
  name: string;
  /** Leaves to copy; new doc ids follow source order (see `buildDocMaps`). */
  sources: SegmentSource[];
  /** Fields to write and how. */
  fields: SegmentFieldInfo[];
  /** Numeric fields written as inplace columns (in addition to fields flagged `inplace`). */
  inplaceFields: string[];
  /** Pause (setImmediate) at least this often, in milliseconds (default 8). */
  yieldEveryMs?: number;
  /** Fault injection for crash tests: called after each file is complete and fsynced. */
  faults?: { afterFileWritten?: (file: string) => void };
}

/** What the shard manifest records about a segment. */
export interface SegmentMeta {
  name: string;
  maxDoc: number;
  liveDocs: number;
  /** Bytes of every file written with the segment (immutable files and generation 0 files). */
  bytes: number;
  /** Immutable files (generation files excluded) with their size and CRC32C. */
  files: Record<string, FileChecksum>;
  createdAt: number;
  formatVersion: number;
}

/** Compacting doc maps: live docs (or all docs with `keepDeleted`) numbered in reader order. */
export function buildDocMaps(readers: readonly LeafReader[], keepDeleted = false): Int32Array[] {
  let next = 0;
  return readers.map((reader) => {
    const docMap = new Int32Array(reader.maxDoc);
    for (let doc = 0; doc < reader.maxDoc; doc++) {
      docMap[doc] = keepDeleted || reader.isLive(doc) ? next++ : -1;
    }
    return docMap;
  });
}

/** Writes a segment from the sources and returns its meta once the directory is in place. */
export async function writeSegment(options: WriteSegmentOptions): Promise<SegmentMeta> {
  const maxDoc = validateDocMaps(options.sources);
  const fieldsByName = new Map<string, SegmentFieldInfo>();
  for (const field of options.fields) fieldsByName.set(field.name, field);
  const inplace = new Set(options.inplaceFields);
  for (const field of options.fields) if (field.inplace) inplace.add(field.name);
  for (const name of inplace) {
    const field = fieldsByName.get(name);
    if (field && field.kind !== 'numeric') throw new EngineError('illegal_argument', `inplace field ${name} is not numeric`);
    if (!field) fieldsByName.set(name, { name, kind: 'numeric', positions: false, inplace: true });
  }
  const fields = [...fieldsByName.values()];
  const indexed = fields.filter((field) => field.kind !== 'numeric');
  const numeric = fields.filter((field) => field.kind === 'numeric');
  const keyword = fields.filter((field) => field.kind === 'keyword');

  const liveDocs = snapshotLiveDocs(options.sources, maxDoc);
  const tmpDir = `${options.dir}.tmp`;
  if (await exists(options.dir)) throw new EngineError('illegal_argument', `segment directory ${options.dir} already exists`);
  await fsp.rm(tmpDir, { recursive: true, force: true });
  await fsp.mkdir(tmpDir, { recursive: true });

  const context = new WriteContext(options.sources, maxDoc, options.yieldEveryMs ?? 8);
  const output = new SegmentDirectoryWriter(tmpDir, context, options.faults?.afterFileWritten);
  try {
    // The stored sources go first, so that their many bytes are written back and fsynced while the inverted index is computed.
    await output.writeFiles([{ name: SegmentFileName.storedSource, magic: FileMagic.storedSource }], async ([file]) => {
      const writer = new StoredSourceWriter(file!);
      await writeStoredSources(context, writer);
      writer.finish();
    });
    const norms = await collectNorms(context, indexed.map((field) => field.name));
    const specs: InvertedFieldSpec[] = indexed.map((field) => ({
      name: field.name,
      kind: field.kind === 'text' ? 'text' : 'keyword',
      positions: field.kind === 'text' && field.positions,
      norms: norms.get(field.name) ?? null,
    }));
    const stats = await output.writeFiles(
      [
        { name: SegmentFileName.terms, magic: FileMagic.terms },
        { name: SegmentFileName.postings, magic: FileMagic.postings },
        { name: SegmentFileName.positions, magic: FileMagic.positions },
      ],
      ([terms, postings, positions]) => writeInvertedIndex(context, specs, { terms: terms!, postings: postings!, positions: positions! }),
      true,
    );
    // The other files are computed first, while the inverted index files are fsynced, and written after them.
    const numericFields: CollectedNumericField[] = [];
    for (const field of numeric) numericFields.push(await collectNumericField(context, field.name, inplace.has(field.name)));
    const rangeIndexes: CollectedRangeIndex[] = [];
    for (const field of numericFields) {
      if (field.mode === NumericMode.inplace || fieldsByName.get(field.name)!.rangeIndex === false) continue;
      rangeIndexes.push(await collectRangeIndex(context, field));
    }
    const keywordFields: CollectedKeywordField[] = [];
    for (const field of keyword) keywordFields.push(await collectKeywordField(context, field.name));
    const docMeta = await collectDocMeta(context);

    await output.writeFiles([{ name: SegmentFileName.norms, magic: FileMagic.norms }], async ([file]) => {
      writeNorms(
        file!.sink,
        maxDoc,
        specs.map((spec) => ({ name: spec.name, stats: stats.get(spec.name)!, norms: spec.norms })),
      );
    });
    await output.writeFiles([{ name: SegmentFileName.numericColumns, magic: FileMagic.numericColumns }], async ([file]) => {
      writeNumericColumns(file!.sink, maxDoc, numericFields);
    });
    await output.writeFiles([{ name: SegmentFileName.numericRangeIndex, magic: FileMagic.numericRangeIndex }], async ([file]) => {
      writeNumericRangeIndex(file!.sink, maxDoc, rangeIndexes);
    });
    for (const field of numericFields) {
      if (field.mode !== NumericMode.inplace) continue;
      await output.writeGenerationFile(inplaceFileName(field.name, 0), (filePath) => writeInplaceFile(filePath, field.values));
    }
    await output.writeFiles([{ name: SegmentFileName.keywordColumns, magic: FileMagic.keywordColumns }], async ([file]) => {
      writeKeywordColumns(file!.sink, maxDoc, keywordFields);
    });
    await output.writeFiles([{ name: SegmentFileName.docMeta, magic: FileMagic.docMeta }], async ([file]) => {
      writeDocMeta(file!.sink, docMeta);
    });

    if (liveDocs.liveCount < maxDoc) {
      await output.writeGenerationFile(liveDocsFileName(0), (filePath) => writeLiveDocsFile(filePath, liveDocs.bits, maxDoc));
    }

    await output.settle();
    await fsyncDirectory(tmpDir);
    await fsp.rename(tmpDir, options.dir);
    await fsyncDirectory(path.dirname(options.dir));
  } catch (error) {
    await output.settle().catch(() => undefined);
    await fsp.rm(tmpDir, { recursive: true, force: true }).catch(() => undefined);
    throw error;
  }
  return {
    name: options.name,
    maxDoc,
    liveDocs: liveDocs.liveCount,
    bytes: output.bytes,
    files: output.files,
    createdAt: Date.now(),
    formatVersion: SEGMENT_FORMAT_VERSION,
  };
}

/**
 * The files of one segment being written into its temporary directory. A file's finish (its last
 * bytes, fsync and close) runs while the writer goes on: files still complete one after another,
 * in order, and the next files are created once it is done, except for a pass asked to start
 * while the previous files finish.
 */
class SegmentDirectoryWriter {
  /** Immutable files written so far. */
  readonly files: Record<string, FileChecksum> = {};
  /** Bytes of every file written so far. */
  bytes = 0;
  /** The finish of the files written last (after those before them), or null. */
  private finishing: Promise<void> | null = null;

  constructor(
    private readonly dir: string,
    private readonly context: WriteContext,
    private readonly afterFileWritten: ((file: string) => void) | undefined,
  ) {}

  /**
   * Creates immutable files, lets `fill` write their bodies, then starts finishing (fsyncing) them
   * in order; `whilePreviousFinish` creates and fills them while the files before are still finishing.
   */
  async writeFiles<T>(
    specs: { name: string; magic: string }[],
    fill: (outputs: OutputFile[]) => Promise<T>,
    whilePreviousFinish = false,
  ): Promise<T> {
    if (!whilePreviousFinish) await this.settle();
    const outputs: OutputFile[] = [];
    let result: T;
    try {
      for (const spec of specs) {
        const output = await OutputFile.create(path.join(this.dir, spec.name), spec.magic);
        outputs.push(output);
        this.context.track(output);
      }
      result = await fill(outputs);
    } catch (error) {
      for (const output of outputs) {
        this.context.untrack(output);
        await output.abandon();
      }
      throw error;
    }
    for (const output of outputs) this.context.untrack(output);
    const previous = this.finishing;
    const finish = (): Promise<void> => this.finishAll(specs, outputs);
    this.finishing =
      previous === null
        ? finish()
        : previous.then(finish, async (error: unknown) => {
            for (const output of outputs) await output.abandon();
            throw error;
          });
    // Awaited by `settle`; the handler keeps a failure from being reported as unhandled meanwhile.
    this.finishing.catch(() => undefined);
    return result;
  }

  /** Writes a generation 0 file (not listed in `files`). */
  async writeGenerationFile(name: string, write: (filePath: string) => Promise<FileChecksum>): Promise<void> {
    await this.settle();
    this.written(name, await write(path.join(this.dir, name)));
  }

  /** Waits until the files written last are finished; throws what finishing them threw. */
  async settle(): Promise<void> {
    const finishing = this.finishing;
    this.finishing = null;
    if (finishing !== null) await finishing;
  }

  private async finishAll(specs: { name: string }[], outputs: OutputFile[]): Promise<void> {
    for (let i = 0; i < outputs.length; i++) {
      try {
        const checksum = await outputs[i]!.finish();
        this.files[specs[i]!.name] = checksum;
        this.written(specs[i]!.name, checksum);
      } catch (error) {
        for (const output of outputs.slice(i)) await output.abandon();
        throw error;
      }
    }
  }

  private written(name: string, checksum: FileChecksum): void {
    this.bytes += checksum.bytes;
    this.afterFileWritten?.(name);
  }
}

/** Checks that the doc maps number kept docs 0.. in source order; returns the new doc count. */
function validateDocMaps(sources: SegmentSource[]): number {
  let next = 0;
  for (const { reader, docMap } of sources) {
    if (docMap.length !== reader.maxDoc) {
      throw new EngineError('illegal_argument', `doc map of ${reader.name} has ${docMap.length} entries, leaf has ${reader.maxDoc} docs`);
    }
    for (let doc = 0; doc < docMap.length; doc++) {
      const newDoc = docMap[doc]!;
      if (newDoc === -1) continue;
      if (newDoc !== next) {
        throw new EngineError('illegal_argument', `doc map of ${reader.name} maps doc ${doc} to ${newDoc}, expected ${next} or -1`);
      }
      next++;
    }
  }
  return next;
}

/** Liveness of the new docs as the sources report it now (kept deleted docs stay deleted). */
function snapshotLiveDocs(sources: SegmentSource[], maxDoc: number): LiveDocs {
  const liveDocs = LiveDocs.allLive(maxDoc);
  for (const { reader, docMap } of sources) {
    for (let doc = 0; doc < docMap.length; doc++) {
      if (docMap[doc]! >= 0 && !reader.isLive(doc)) liveDocs.delete(docMap[doc]!);
    }
  }
  return liveDocs;
}

async function exists(target: string): Promise<boolean> {
  try {
    await fsp.access(target);
    return true;
  } catch {
    return false;
  }
}
