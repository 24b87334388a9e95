/**
 * Generation files of a segment's field overlays, `overlay.<gen>`: for each doc with field-level
 * updates not yet merged into the segment, the JSON text of each replaced top-level field (or its
 * removal). Written by an epoch when the overlays changed; the reader re-applies them at open.
 */
import { ByteReader } from './byte-io.ts';
import { FileMagic, FOOTER_BYTES, HEADER_BYTES, corruptFile, readVerifiedFile, writeSmallFile, type FileChecksum } from './segment-file.ts';

/** One doc's replaced top-level fields: JSON text, or null for a removed field. */
export type OverlayEntry = [doc: number, texts: ReadonlyMap<string, string | null>];

/** File name of an overlay generation. */
export function overlayFileName(generation: number): string {
  return `overlay.${generation}`;
}

/** Writes an overlay generation file durably (the caller fsyncs the directory). */
export function writeOverlayFile(path: string, entries: readonly OverlayEntry[]): Promise<FileChecksum> {
  return writeSmallFile(path, FileMagic.overlay, (sink) => {
    sink.writeVarint(entries.length);
    for (const [doc, texts] of entries) {
      sink.writeVarint(doc);
      sink.writeVarint(texts.size);
      for (const [key, text] of texts) {
        sink.writeString(key);
        sink.writeByte(text === null ? 0 : 1);
        if (text !== null) sink.writeString(text);
      }
    }
  });
}

/** Reads an overlay generation file; docs must be below `maxDoc`. */
export function readOverlayFile(path: string, maxDoc: number): OverlayEntry[] {
  const data = readVerifiedFile(path, FileMagic.overlay);
  const reader = new ByteReader(data, HEADER_BYTES);
  const count = reader.readVarint();
  const entries: OverlayEntry[] = [];
  for (let index = 0; index < count; index++) {
    const doc = reader.readVarint();
    if (doc >= maxDoc) throw corruptFile(path, `overlay of doc ${doc}, segment has ${maxDoc}`);
    const texts = new Map<string, string | null>();
    const keys = reader.readVarint();
    for (let key = 0; key < keys; key++) {
      const name = reader.readString();
      texts.set(name, reader.readByte() === 0 ? null : reader.readString());
    }
    entries.push([doc, texts]);
  }
  if (reader.pos + FOOTER_BYTES !== data.length) throw corruptFile(path, 'trailing bytes after the overlays');
  return entries;
}
