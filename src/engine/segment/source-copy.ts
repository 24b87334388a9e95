/**
 * Writes the stored sources of a new segment. Blocks of a source segment (format 6, paged) whose
 * docs are all kept, in a segment without field overlays, are copied as they are stored (compressed
 * bytes, no decompression), runs of such blocks read sequentially in large parts; the kept docs of
 * the other blocks, and the docs of other leaves, are added one by one and compressed into new blocks.
 */
import { SegmentReader } from './segment-reader.ts';
import type { StoredSourceWriter } from './stored-source.ts';
import type { WriteContext } from './write-context.ts';

/** Most bytes of whole blocks copied at once (between pause checks). */
const COPY_RUN_BYTES = 1024 * 1024;

/** Adds every kept doc's source to `writer`, in new-doc order, pausing when due. */
export async function writeStoredSources(context: WriteContext, writer: StoredSourceWriter): Promise<void> {
  for (const { reader, docMap } of context.sources) {
    const store = reader instanceof SegmentReader && reader.overlay.size === 0 ? reader.storedSourceFile() : null;
    if (store === null || !store.blocksCopyable) {
      for (let doc = 0; doc < docMap.length; doc++) {
        if (docMap[doc]! < 0) continue;
        writer.add(reader.source(doc));
        if (context.pauseDue()) await context.pause();
      }
      continue;
    }
    const blocks = store.blockCount;
    const wholeBlock = (block: number): boolean => {
      for (let doc = store.blockFirstDoc(block); doc < store.blockFirstDoc(block + 1); doc++) if (docMap[doc]! < 0) return false;
      return true;
    };
    for (let block = 0; block < blocks; ) {
      if (wholeBlock(block)) {
        const first = block;
        const start = store.blockOffset(first);
        block++;
        while (block < blocks && store.blockOffset(block) - start < COPY_RUN_BYTES && wholeBlock(block)) block++;
        store.copyBlocksTo(first, block, writer);
        if (context.overdue()) await context.pause();
        continue;
      }
      for (let doc = store.blockFirstDoc(block); doc < store.blockFirstDoc(block + 1); doc++) if (docMap[doc]! >= 0) writer.add(reader.source(doc));
      block++;
      if (context.pauseDue()) await context.pause();
    }
  }
}
