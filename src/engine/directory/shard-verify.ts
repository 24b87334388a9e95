/**
 * Read-only verification of a shard directory against its snapshot: a closed one in the trash, or
 * a live one (`Shard.verify`, which pins its files while this runs and snapshots its WAL up to the
 * durable end). Every
 * recorded file present with its size, every file intact by its checksum (segment files by their
 * CRC32C footer and the checksum the segment meta recorded, WAL files frame by frame, the shard
 * manifest by the CRC32C recorded at delete time), and the documents counted from the files equal
 * to the count recorded at delete time. The count is rebuilt the way the shard rebuilds its state
 * when it opens: the live ids of the segments (doc meta + live docs), then the WAL records past the
 * checkpoint replayed over them. Files are opened with `O_NOATIME` and never written, so
 * verification changes nothing, not even access times.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ByteReader } from '../segment/byte-io.ts';
import { DocMetaStore } from '../segment/doc-meta-store.ts';
import { parseInplaceFileName } from '../segment/inplace-file.ts';
import { LiveDocs, liveDocsFileName } from '../segment/live-docs.ts';
import {
  FileMagic,
  FOOTER_BYTES,
  HEADER_BYTES,
  isSupportedFormatVersion,
  SegmentFileName,
  type FileChecksum,
} from '../segment/segment-file.ts';
import { isSupportedManifestVersion, type Manifest, type ManifestSegment } from '../shard/manifest.ts';
import { decodeRecord } from '../shard/wal-records.ts';
import { crc32c } from './checksum.ts';
import { crcOfRange, openReadOnly, readWholeFile, SHARD_MANIFEST_FILE, type ShardFileEntry } from './shard-files.ts';
import { verifyWalFiles } from './wal-verify.ts';

/** What a shard directory is verified against: the inventory and figures recorded when it closed. */
export interface ShardSnapshot {
  collection: string;
  shard: number;
  uuid: string;
  /** Live documents when the shard was closed; null when unknown (then they are not compared). */
  documents: number | null;
  /** Highest WAL seq of the shard; null when unknown. */
  seqNo: number | null;
  segments: number;
  /** Every file the shard's own manifest references, plus its WAL files and the manifest itself. */
  files: ShardFileEntry[];
}

/** Outcome for one file of the snapshot: absent or of the wrong size, failing its checks, or intact. */
export type FileFindingStatus = 'ok' | 'missing' | 'damaged';

/** What verification found for one file of the snapshot. */
export interface FileFinding {
  /** Path relative to the shard directory, `/`-separated. */
  path: string;
  /** Bytes recorded (for the active WAL file of a live shard: its durable bytes, the ones checked). */
  bytes: number;
  status: FileFindingStatus;
  /** Whether its content was checked (segment files by checksum, WAL files frame by frame, the manifest parsed). */
  checked: boolean;
  problems: string[];
}

/** Outcome for one shard: `missing` (no directory), `damaged` (files), or a wrong document count. */
export type ShardCheckStatus = 'ok' | 'missing' | 'damaged' | 'document_count_mismatch';

/** What verification found for one shard copy on one node. */
export interface ShardCheck {
  collection: string;
  shard: number;
  uuid: string;
  status: ShardCheckStatus;
  expectedDocuments: number | null;
  foundDocuments: number | null;
  filesChecked: number;
  bytesChecked: number;
  problems: string[];
}

/** A shard check with its findings file by file. */
export interface DetailedShardCheck extends ShardCheck {
  files: FileFinding[];
}

/** Options of `verifyShardFiles`. */
export interface VerifyOptions {
  /** When the snapshot's figures were recorded, as problems word it (default `at delete time`). */
  recordedWhen?: string;
}

const IMMUTABLE_MAGIC = new Map<string, string>(
  (Object.keys(SegmentFileName) as Array<keyof typeof SegmentFileName>).map((key) => [SegmentFileName[key], FileMagic[key]]),
);

/** The magic a segment file must carry, by its name; null for names the engine does not write. */
function magicOf(name: string): string | null {
  const immutable = IMMUTABLE_MAGIC.get(name);
  if (immutable !== undefined) return immutable;
  if (/^live\.\d+$/.test(name)) return FileMagic.liveDocs;
  if (/^meta\.\d+$/.test(name)) return FileMagic.docMetaGeneration;
  if (parseInplaceFileName(name) !== null) return FileMagic.inplace;
  if (/^overlay\.\d+$/.test(name)) return FileMagic.overlay;
  return null;
}

/** Checks header, CRC32C footer and (when given) recorded size and checksum; returns a problem or null. */
async function checkSegmentFile(path: string, magic: string, expected: FileChecksum | undefined): Promise<string | null> {
  const handle = await openReadOnly(path);
  try {
    const { size } = await handle.stat();
    if (expected && size !== expected.bytes) return `size ${size} differs from the ${expected.bytes} bytes the segment recorded`;
    if (size < HEADER_BYTES + FOOTER_BYTES) return 'file too short';
    const header = Buffer.alloc(HEADER_BYTES + FOOTER_BYTES);
    await handle.read(header, 0, HEADER_BYTES, 0);
    await handle.read(header, HEADER_BYTES, FOOTER_BYTES, size - FOOTER_BYTES);
    if (header.toString('latin1', 0, 4) !== magic) return `bad magic (expected ${magic})`;
    if (!isSupportedFormatVersion(header.readUInt32LE(4))) return `unsupported format version ${header.readUInt32LE(4)}`;
    const computed = await crcOfRange(handle, size - FOOTER_BYTES);
    if (header.readUInt32LE(HEADER_BYTES) !== computed) return 'checksum mismatch';
    if (expected && expected.crc32c !== computed) return 'checksum differs from the one the segment recorded';
    return null;
  } finally {
    await handle.close();
  }
}

/** The current live docs of a segment (the files were checked); a missing generation 0 means all live. */
async function readLiveDocs(segmentDir: string, generation: number, maxDoc: number, present: boolean): Promise<LiveDocs> {
  if (generation === 0 && !present) return LiveDocs.allLive(maxDoc);
  const data = await readWholeFile(join(segmentDir, liveDocsFileName(generation)));
  const reader = new ByteReader(data, HEADER_BYTES);
  const storedMaxDoc = reader.readVarint();
  const byteCount = Math.ceil(maxDoc / 8);
  if (storedMaxDoc !== maxDoc || reader.pos + byteCount + FOOTER_BYTES !== data.length) {
    throw new Error(`live docs hold ${storedMaxDoc} docs, the segment has ${maxDoc}`);
  }
  return LiveDocs.fromBits(reader.readBytes(byteCount), maxDoc);
}

/** Adds the ids of a segment's live documents to `liveIds`. */
async function collectLiveIds(segmentDir: string, entry: ManifestSegment, liveDocsPresent: boolean, liveIds: Set<string>): Promise<void> {
  const { maxDoc } = entry.meta;
  const liveDocs = await readLiveDocs(segmentDir, entry.liveDocsGen, maxDoc, liveDocsPresent);
  const docMeta = new DocMetaStore(await readWholeFile(join(segmentDir, SegmentFileName.docMeta)), HEADER_BYTES, maxDoc);
  for (let doc = 0; doc < maxDoc; doc++) if (liveDocs.isLive(doc)) liveIds.add(docMeta.meta(doc).id);
}

/** Applies one WAL record past the checkpoint to the set of live ids, as the shard's replay does. */
function replayRecord(payload: Buffer, liveIds: Set<string>): void {
  const record = decodeRecord(payload);
  if (record.type === 'index') liveIds.add(record.id);
  else if (record.type === 'delete') liveIds.delete(record.id);
}

/** Parses and checks the shard manifest; records problems and returns it when usable. */
async function readShardManifest(dir: string, snapshot: ShardSnapshot, damage: string[]): Promise<Manifest | null> {
  const entry = snapshot.files.find((file) => file.path === SHARD_MANIFEST_FILE);
  if (!entry) {
    if (snapshot.segments > 0) damage.push('the snapshot lists no shard manifest');
    return null;
  }
  let bytes: Buffer;
  try {
    bytes = await readWholeFile(join(dir, SHARD_MANIFEST_FILE));
  } catch (error) {
    damage.push(`${SHARD_MANIFEST_FILE}: cannot read (${(error as Error).message})`);
    return null;
  }
  if (entry.crc32c !== undefined && crc32c(bytes) !== entry.crc32c) {
    damage.push(`${SHARD_MANIFEST_FILE}: checksum differs from the one recorded at delete time`);
    return null;
  }
  try {
    const manifest = JSON.parse(bytes.toString('utf8')) as Manifest;
    if (!isSupportedManifestVersion(manifest.formatVersion)) damage.push(`${SHARD_MANIFEST_FILE}: format version ${manifest.formatVersion}`);
    else if (manifest.shardUuid !== snapshot.uuid) damage.push(`${SHARD_MANIFEST_FILE}: belongs to shard ${manifest.shardUuid}`);
    else return manifest;
  } catch (error) {
    damage.push(`${SHARD_MANIFEST_FILE}: ${(error as Error).message}`);
  }
  return null;
}

/** Verifies the shard directory `dir` against `snapshot` (see the module comment), per shard. */
export async function verifyShard(dir: string, snapshot: ShardSnapshot): Promise<ShardCheck> {
  const { files: _files, ...check } = await verifyShardFiles(dir, snapshot);
  return check;
}

/** Verifies the shard directory `dir` against `snapshot`, with a finding for every file of the snapshot. */
export async function verifyShardFiles(dir: string, snapshot: ShardSnapshot, options: VerifyOptions = {}): Promise<DetailedShardCheck> {
  const recordedWhen = options.recordedWhen ?? 'at delete time';
  const checked = new Set<string>();
  const check: ShardCheck = {
    collection: snapshot.collection,
    shard: snapshot.shard,
    uuid: snapshot.uuid,
    status: 'ok',
    expectedDocuments: snapshot.documents,
    foundDocuments: null,
    filesChecked: 0,
    bytesChecked: 0,
    problems: [],
  };
  try {
    await stat(dir);
  } catch {
    const files = snapshot.files.map((file): FileFinding => ({ path: file.path, bytes: file.bytes, status: 'missing', checked: false, problems: ['missing'] }));
    return { ...check, status: 'missing', problems: ['the shard directory is missing'], files };
  }
  const damage: string[] = [];
  const present = new Set<string>();
  for (const file of snapshot.files) {
    try {
      const info = await stat(join(dir, file.path));
      const sizeFits = file.appendOnly ? info.size >= file.bytes : info.size === file.bytes;
      if (!sizeFits) damage.push(`${file.path}: size ${info.size}, ${file.bytes} bytes recorded`);
      else present.add(file.path);
    } catch {
      damage.push(`${file.path}: missing`);
    }
  }
  const manifest = await readShardManifest(dir, snapshot, damage);
  const segmentMetas = new Map((manifest?.segments ?? []).map((entry) => [entry.meta.name, entry.meta]));
  for (const file of snapshot.files) {
    if (!present.has(file.path) || !file.path.startsWith('segments/')) continue;
    const [, segment, name] = file.path.split('/');
    const magic = magicOf(name ?? '');
    if (magic === null) continue;
    const problem = await checkSegmentFile(join(dir, file.path), magic, segmentMetas.get(segment ?? '')?.files[name ?? '']);
    checked.add(file.path);
    check.filesChecked++;
    check.bytesChecked += file.bytes;
    if (problem !== null) damage.push(`${file.path}: ${problem}`);
  }
  const liveIds = new Set<string>();
  let countable = manifest !== null || snapshot.segments === 0;
  for (const entry of manifest?.segments ?? []) {
    const base = `segments/${entry.meta.name}`;
    const referenced = [
      ...Object.keys(entry.meta.files),
      ...(entry.liveDocsGen > 0 ? [liveDocsFileName(entry.liveDocsGen)] : []),
      ...(entry.metaGen > 0 ? [`meta.${entry.metaGen}`] : []),
    ];
    for (const name of referenced) if (!snapshot.files.some((file) => file.path === `${base}/${name}`)) damage.push(`${base}/${name}: not recorded`);
    try {
      await collectLiveIds(join(dir, base), entry, present.has(`${base}/${liveDocsFileName(entry.liveDocsGen)}`), liveIds);
    } catch (error) {
      damage.push(`${base}: cannot read its documents (${(error as Error).message})`);
      countable = false;
    }
  }

  const walFiles = snapshot.files.filter((file) => file.path.startsWith('wal/') && present.has(file.path));
  let replayFailure: string | null = null;
  const walToCheck = walFiles.map((file) => ({ path: file.path, bytes: file.bytes }));
  const onTail = (payload: Buffer): void => {
    try {
      replayRecord(payload, liveIds);
    } catch (error) {
      replayFailure ??= (error as Error).message;
    }
  };
  const wal = await verifyWalFiles(dir, walToCheck, snapshot.seqNo, manifest?.checkpointSeq ?? 0, onTail, recordedWhen);
  for (const file of walFiles) checked.add(file.path);
  if (present.has(SHARD_MANIFEST_FILE)) checked.add(SHARD_MANIFEST_FILE);
  check.filesChecked += walFiles.length + (present.has(SHARD_MANIFEST_FILE) ? 1 : 0);
  check.bytesChecked += walFiles.reduce((sum, file) => sum + file.bytes, 0);
  damage.push(...wal.problems);
  if (replayFailure !== null) damage.push(`a write-ahead log record cannot be decoded: ${replayFailure}`);
  if (countable) check.foundDocuments = liveIds.size;
  const files = fileFindings(snapshot.files, checked, damage);
  if (damage.length > 0) return { ...check, status: 'damaged', problems: damage, files };
  if (snapshot.documents !== null && check.foundDocuments !== snapshot.documents) {
    return {
      ...check,
      status: 'document_count_mismatch',
      problems: [`the segments hold ${check.foundDocuments} live documents, ${snapshot.documents} were recorded ${recordedWhen}`],
      files,
    };
  }
  return { ...check, files };
}

/** One finding per snapshot file: the problems that name it (each is worded `<path>: <problem>`). */
function fileFindings(files: readonly ShardFileEntry[], checked: ReadonlySet<string>, damage: readonly string[]): FileFinding[] {
  return files.map((file) => {
    const prefix = `${file.path}: `;
    const problems = damage.filter((problem) => problem.startsWith(prefix)).map((problem) => problem.slice(prefix.length));
    const status: FileFindingStatus = problems.includes('missing') ? 'missing' : problems.length > 0 ? 'damaged' : 'ok';
    return { path: file.path, bytes: file.bytes, status, checked: checked.has(file.path), problems };
  });
}
