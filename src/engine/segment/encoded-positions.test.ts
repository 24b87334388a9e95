import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EngineError } from '../errors.ts';
import { ByteSink } from './byte-io.ts';
import { checkPositionLengths, measurePositionLengths, type EncodedPositions } from './encoded-positions.ts';
import { seededRandom } from './reference-leaf.fixture.ts';

/** A block of `count` docs with random freqs and position deltas, its bytes from `start` and `tail` bytes after them. */
function randomBlock(random: () => number, count: number, start: number, tail: number): { positions: EncodedPositions; lengths: Int32Array } {
  const sink = new ByteSink(64);
  for (let i = 0; i < start; i++) sink.writeByte(0xff);
  const docs = new Int32Array(count);
  const freqs = new Int32Array(count);
  const lengths = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    docs[i] = i * 3;
    freqs[i] = random() < 0.6 ? 1 : 1 + Math.floor(random() * 12);
    const before = sink.length;
    for (let k = 0; k < freqs[i]!; k++) sink.writeVarint(Math.floor(random() ** 3 * 40_000));
    lengths[i] = sink.length - before;
  }
  const end = sink.length;
  for (let i = 0; i < tail; i++) sink.writeByte(0xff);
  return { positions: { path: '/segment/postings.pos', block: 2, data: sink.toBytes(), start, end, docs, freqs, count }, lengths };
}

/** The check spelled out byte by byte: each doc's bytes hold exactly its freq varints, the docs fill the block. */
function referenceValid(positions: EncodedPositions, lengths: Int32Array): boolean {
  let pointer = positions.start;
  for (let i = 0; i < positions.count; i++) {
    const docEnd = pointer + lengths[i]!;
    if (docEnd > positions.end || lengths[i]! === 0) return false;
    let varints = 0;
    for (; pointer < docEnd; pointer++) if (positions.data[pointer]! < 0x80) varints++;
    if (varints !== positions.freqs[i] || positions.data[docEnd - 1]! >= 0x80) return false;
  }
  return pointer === positions.end;
}

const isCorrupt = (error: unknown) => error instanceof EngineError && error.code === 'corrupt_index' && error.message.includes('/segment/postings.pos');

test('checkPositionLengths accepts the lengths of well-formed blocks, wherever they end in their bytes', () => {
  const random = seededRandom(11);
  for (let round = 0; round < 300; round++) {
    const { positions, lengths } = randomBlock(random, 1 + Math.floor(random() * 128), Math.floor(random() * 5), Math.floor(random() * 6));
    checkPositionLengths(positions, lengths);
    const measured = new Int32Array(positions.count);
    measurePositionLengths(positions, measured);
    assert.deepEqual(measured, lengths);
  }
});

test('checkPositionLengths rejects, naming the file, exactly the damaged blocks the byte-by-byte check rejects', () => {
  const random = seededRandom(12);
  let rejected = 0;
  for (let round = 0; round < 2000; round++) {
    const { positions, lengths } = randomBlock(random, 1 + Math.floor(random() * 40), Math.floor(random() * 3), Math.floor(random() * 5));
    const doc = Math.floor(random() * positions.count);
    switch (round % 4) {
      case 0: {
        // Bytes move from one doc to its neighbour, either way: a doc may then end in a continuation byte.
        const next = Math.min(doc + 1, positions.count - 1);
        const [from, to] = random() < 0.5 ? [doc, next] : [next, doc];
        const moved = Math.min(lengths[from]!, 1 + Math.floor(random() * 3));
        lengths[from] = lengths[from]! - moved;
        lengths[to] = lengths[to]! + moved;
        break;
      }
      case 1:
        // A byte of the block gains or loses its continuation bit.
        positions.data[positions.start + Math.floor(random() * (positions.end - positions.start))]! ^= 0x80;
        break;
      case 2:
        positions.freqs[doc] = positions.freqs[doc]! + (random() < 0.5 ? 1 : -1);
        break;
      default:
        lengths[doc] = lengths[doc]! + (random() < 0.5 ? 1 : -1) * (1 + Math.floor(random() * 4));
        if (lengths[doc]! < 0) lengths[doc] = 0;
    }
    if (referenceValid(positions, lengths)) {
      checkPositionLengths(positions, lengths);
    } else {
      assert.throws(() => checkPositionLengths(positions, lengths), isCorrupt, `round ${round}`);
      rejected++;
    }
  }
  assert.ok(rejected > 1500, `${rejected} damaged blocks rejected`);
});
