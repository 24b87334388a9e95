/**
 * Writes the stored sources of a new segment. A block of a source segment (format 6, paged) whose
 * docs are all kept, in a segment without field overlays, is copied as it is stored (compressed
 * bytes, no decompression); the kept docs of the other blocks, and the docs of other leaves, are
 * added one by one and compressed into new blocks.
 */
import { SegmentReader } from './segment-reader.ts';
import type { StoredSourceWriter } from './stored-source.ts';
import type { WriteContext } from './write-context.ts';

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
    for (let block = 0; block < blocks; block++) {
      const first = store.blockFirstDoc(block);
      const end = store.blockFirstDoc(block + 1);
      let whole = true;
      for (let doc = first; doc < end && whole; doc++) whole = docMap[doc]! >= 0;
      if (whole) {
        store.copyBlockTo(block, writer);
      } else {
        for (let doc = first; doc < end; doc++) if (docMap[doc]! >= 0) writer.add(reader.source(doc));
      }
      if (context.pauseDue()) await context.pause();
    }
  }
}
