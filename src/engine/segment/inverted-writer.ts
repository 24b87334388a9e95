/**
 * Writes the inverted index of a new segment: for each indexed field, a k-way merge of the
 * sources' sorted terms; each term's postings are the sources' postings concatenated in source
 * order with doc ids remapped (doc maps are monotonic, so the result stays sorted) and dropped
 * docs skipped. From a segment, postings are read block by block with their positions left
 * encoded and copied as they are; a full block whose docs are all kept and shifted alike is copied
 * whole, its first doc delta rewritten and the new term's block before it ending short. Also
 * derives each field's BM25 statistics: the sources' statistics minus the contribution of dropped docs (a
 * dropped doc's length is the sum of its freqs for positional fields, where that sum is the token
 * count, and the length its norm stands for otherwise).
 */
import { NO_MORE_DOCS, POSTINGS_BLOCK_SIZE, type FieldStats, type LeafReader, type PostingsCursor, type TermsIterator } from './leaf-reader.ts';
import { decodeNorm } from './norms.ts';
import { EngineError } from '../errors.ts';
import type { OutputFile } from './segment-file.ts';
import { PostingsEncoder } from './postings-encoder.ts';
import { bitsRequired } from './bitpack.ts';
import { SegmentPostingsCursor, blockBuffers, type BlockBuffers } from './postings-cursor.ts';
import { TermDictionaryWriter, type SegmentFieldKind } from './term-dictionary-writer.ts';
import type { WriteContext } from './write-context.ts';

/** Postings copied between two pause checks. */
const COPY_BATCH = 4096;

/** An indexed field to write. */
export interface InvertedFieldSpec {
  name: string;
  kind: Exclude<SegmentFieldKind, 'numeric'>;
  positions: boolean;
  /** Norm bytes of the new segment for this field, or null when it has none. */
  norms: Uint8Array | null;
}

/** The three files of the inverted index. */
export interface InvertedFiles {
  terms: OutputFile;
  postings: OutputFile;
  positions: OutputFile;
}

/** Per-source accounting of the dropped docs of the current field. */
interface DroppedAccounting {
  reader: LeafReader;
  field: string;
  byFreqs: boolean;
  seen: Uint8Array | null;
  docs: number;
  length: number;
}

/** Merges and writes the terms and postings of every field; returns each field's statistics. */
export async function writeInvertedIndex(
  context: WriteContext,
  fields: InvertedFieldSpec[],
  files: InvertedFiles,
): Promise<Map<string, FieldStats>> {
  const encoder = new PostingsEncoder(files.postings.sink, files.positions.sink);
  const dictionary = new TermDictionaryWriter(files.terms.sink);
  const stats = new Map<string, FieldStats>();
  // Lent to the segment cursors read, one after another.
  const buffers = blockBuffers();
  for (const field of fields) {
    stats.set(field.name, await writeField(context, field, encoder, dictionary, files, buffers));
  }
  dictionary.finish();
  return stats;
}

async function writeField(
  context: WriteContext,
  field: InvertedFieldSpec,
  encoder: PostingsEncoder,
  dictionary: TermDictionaryWriter,
  files: InvertedFiles,
  buffers: BlockBuffers,
): Promise<FieldStats> {
  const participants: number[] = [];
  const iterators: TermsIterator[] = [];
  // Each source's cursor is moved from term to term (`postings(reuse)`).
  const cursors: (PostingsCursor | undefined)[] = [];
  const heads: (string | null)[] = [];
  const dropped: DroppedAccounting[] = [];
  let docCount = 0;
  let sumTotalTermFreq = 0;
  for (let sourceIndex = 0; sourceIndex < context.sources.length; sourceIndex++) {
    const { reader, docMap } = context.sources[sourceIndex]!;
    if (!reader.indexedFields().includes(field.name)) continue;
    if (field.positions && !reader.hasPositions(field.name)) {
      throw new EngineError('illegal_argument', `field ${field.name} has no positions in leaf ${reader.name}`);
    }
    const sourceStats = reader.fieldStats(field.name);
    docCount += sourceStats.docCount;
    sumTotalTermFreq += sourceStats.sumTotalTermFreq;
    const iterator = reader.terms(field.name);
    participants.push(sourceIndex);
    iterators.push(iterator);
    heads.push(iterator.next());
    dropped.push({
      reader,
      field: field.name,
      byFreqs: field.positions,
      seen: docMap.includes(-1) ? new Uint8Array(docMap.length) : null,
      docs: 0,
      length: 0,
    });
  }

  const visitors = dropped.map((accounting, i) => postingsVisitor(context.sources[participants[i]!]!.docMap, encoder, field.positions, accounting));
  dictionary.startField(field.name, field.kind, field.positions);
  encoder.setField(field.norms, field.positions);
  const matching: number[] = [];
  for (;;) {
    let smallest: string | null = null;
    matching.length = 0;
    for (let i = 0; i < heads.length; i++) {
      const head = heads[i]!;
      if (head === null) continue;
      // Most terms are in most sources: test equality first, one string comparison for those.
      if (head === smallest) {
        matching.push(i);
      } else if (smallest === null || head < smallest) {
        smallest = head;
        matching.length = 0;
        matching.push(i);
      }
    }
    if (smallest === null) break;

    encoder.startTerm();
    for (const i of matching) {
      const docMap = context.sources[participants[i]!]!.docMap;
      const cursor = (cursors[i] = iterators[i]!.postings(cursors[i]));
      if (isStreaming(cursor)) {
        while (!cursor.copyTo(visitors[i]!, COPY_BATCH)) {
          if (context.overdue()) await context.pause();
        }
        continue;
      }
      if (cursor instanceof SegmentPostingsCursor) {
        while (!copyEncodedPostings(cursor, docMap, encoder, buffers, field.positions, dropped[i]!)) {
          if (context.overdue()) await context.pause();
        }
        continue;
      }
      while (!copyPostings(cursor, docMap, encoder, field.positions, dropped[i]!)) {
        if (context.overdue()) await context.pause();
      }
    }
    const encoded = encoder.finishTerm();
    if (encoded.docFreq > 0) {
      const docStart = files.postings.sink.length - encoded.docBytes;
      const posStart = files.positions.sink.length - encoded.posBytes;
      dictionary.addTerm(smallest, encoded, docStart, posStart);
    }
    for (const i of matching) heads[i] = iterators[i]!.next();
    // Awaited only when due: an await per term would cost a microtask turn per term.
    if (context.pauseDue()) await context.pause();
  }

  for (const accounting of dropped) {
    docCount -= accounting.docs;
    sumTotalTermFreq -= accounting.length;
  }
  return { docCount, sumTotalTermFreq };
}

/**
 * A cursor that streams its postings to a callback (the mutable layer's): an epoch then copies
 * them without an accessor call and a positions array per posting.
 */
interface StreamingPostings extends PostingsCursor {
  /** Passes up to `limit` remaining postings to `visit` (positions valid during the call only); true once exhausted. */
  copyTo(visit: (doc: number, freq: number, positions: ArrayLike<number> | null) => void, limit: number): boolean;
}

function isStreaming(cursor: PostingsCursor): cursor is StreamingPostings {
  return typeof (cursor as Partial<StreamingPostings>).copyTo === 'function';
}

/** What `copyPostings` does with one posting, as a callback for streaming cursors. */
function postingsVisitor(
  docMap: Int32Array,
  encoder: PostingsEncoder,
  withPositions: boolean,
  dropped: DroppedAccounting,
): (doc: number, freq: number, positions: ArrayLike<number> | null) => void {
  return (doc, freq, positions) => {
    const newDoc = docMap[doc]!;
    if (newDoc < 0) {
      dropPosting(dropped, doc, freq);
      return;
    }
    encoder.addDoc(newDoc, freq, withPositions ? positions : null);
  };
}

/** Counts a dropped posting in the field's statistics (a doc once, its length per `byFreqs`). */
function dropPosting(dropped: DroppedAccounting, doc: number, freq: number): void {
  const seen = dropped.seen!;
  if (seen[doc] === 0) {
    seen[doc] = 1;
    dropped.docs++;
    if (!dropped.byFreqs) dropped.length += decodeNorm(dropped.reader.norm(dropped.field, doc));
  }
  if (dropped.byFreqs) dropped.length += freq;
}

/**
 * Copies whole blocks of a segment term (at least COPY_BATCH postings unless it ends), positions
 * copied encoded, runs of kept docs at once; true when the cursor is exhausted.
 */
function copyEncodedPostings(
  cursor: SegmentPostingsCursor,
  docMap: Int32Array,
  encoder: PostingsEncoder,
  buffers: BlockBuffers,
  withPositions: boolean,
  dropped: DroppedAccounting,
): boolean {
  for (let copied = 0; copied < COPY_BATCH; ) {
    if (copyStoredBlock(cursor, docMap, encoder, withPositions)) {
      copied += POSTINGS_BLOCK_SIZE;
      continue;
    }
    const count = cursor.nextEncodedBlock(buffers, withPositions);
    if (count === 0) return true;
    copied += count;
    const docs = cursor.blockDocs;
    const freqs = cursor.blockFreqs;
    const lengths = withPositions ? buffers.positionLengths : null;
    const bytes = withPositions ? cursor.blockPositionData : null;
    let pointer = withPositions ? cursor.blockPositionStart : 0;
    // A source that keeps every doc (no `seen` set for dropped ones) needs no run search.
    if (dropped.seen === null) {
      encoder.addEncodedDocs(docMap, docs, freqs, lengths, 0, count, bytes, pointer);
      continue;
    }
    let i = 0;
    while (i < count) {
      let end = i;
      while (end < count && docMap[docs[end]!]! >= 0) end++;
      if (end > i) pointer += encoder.addEncodedDocs(docMap, docs, freqs, lengths, i, end, bytes, pointer);
      for (i = end; i < count && docMap[docs[i]!]! < 0; i++) {
        dropPosting(dropped, docs[i]!, freqs[i]!);
        if (lengths !== null) pointer += lengths[i]!;
      }
    }
  }
  return false;
}

/**
 * Copies the cursor's next block as it is stored when its docs are all kept and keep their
 * distances: its first doc delta rewritten to follow the term's last doc (when the new delta
 * fits the block's width), the new term's current block ending short before it. True when copied.
 */
function copyStoredBlock(cursor: SegmentPostingsCursor, docMap: Int32Array, encoder: PostingsEncoder, withPositions: boolean): boolean {
  const lastDoc = cursor.nextStoredBlockLastDoc(withPositions);
  if (lastDoc < 0) return false;
  const firstGap = cursor.nextStoredBlockFirstDelta();
  if (firstGap < 0) return false;
  const firstDoc = cursor.nextBlockPreviousDoc + 1 + firstGap;
  if (firstDoc > lastDoc) return false;
  const newFirst = docMap[firstDoc]!;
  // The doc map is increasing over kept docs: both ends kept and shifted alike means every doc between is too.
  if (newFirst < 0 || docMap[lastDoc]! - newFirst !== lastDoc - firstDoc) return false;
  const newGap = newFirst - encoder.termLastDoc - 1;
  if (bitsRequired(newGap) > cursor.nextStoredBlockDeltaBits) return false;
  encoder.endBlockEarly();
  cursor.takeStoredBlock(encoder, newFirst - firstDoc, newGap);
  return true;
}

/** Copies up to COPY_BATCH postings; true when the cursor is exhausted. */
function copyPostings(
  cursor: PostingsCursor,
  docMap: Int32Array,
  encoder: PostingsEncoder,
  withPositions: boolean,
  dropped: DroppedAccounting,
): boolean {
  for (let copied = 0; copied < COPY_BATCH; copied++) {
    const doc = cursor.next();
    if (doc === NO_MORE_DOCS) return true;
    const newDoc = docMap[doc]!;
    if (newDoc < 0) {
      dropPosting(dropped, doc, dropped.byFreqs ? cursor.freq() : 0);
      continue;
    }
    encoder.addDoc(newDoc, cursor.freq(), withPositions ? cursor.positions() : null);
  }
  return false;
}
