/**
 * Child process of crash.test.ts: appends to a log until it is killed, printing `durable <seq>`
 * after each batch is durable and `remove <seq>` before each removal it asks for.
 * Usage: node --import tsx crash-child.fixture.ts <dir>
 */
import { pathToFileURL } from 'node:url';
import { WriteAheadLog } from './wal.ts';

/** Segment size the child uses, small so that files rotate and get removed while it runs. */
export const CRASH_SEGMENT_BYTES = 128 * 1024;

/** The payload the child writes for `seq`: its length and bytes both depend on the seq. */
export function crashPayload(seq: number): Buffer {
  const payload = Buffer.alloc(8 + ((seq * 7919) % 997), seq & 0xff);
  payload.writeUInt32LE(seq % 0x1_0000_0000, 0);
  return payload;
}

const MAX_BATCHES_IN_FLIGHT = 8;
const REMOVE_EVERY_BATCHES = 150;
const RETAINED_RECORDS = 3000;

async function main(dir: string): Promise<void> {
  const wal = await WriteAheadLog.open({ dir, segmentBytes: CRASH_SEGMENT_BYTES });
  process.stdout.write(`open ${wal.lastSeq}\n`);
  let inFlight = 0;
  let batches = 0;
  const pump = (): void => {
    while (inFlight < MAX_BATCHES_IN_FLIGHT) {
      const count = 1 + Math.floor(Math.random() * 20);
      const firstSeq = wal.lastSeq + 1;
      const payloads: Buffer[] = [];
      for (let seq = firstSeq; seq < firstSeq + count; seq++) payloads.push(crashPayload(seq));
      const appended = wal.append(payloads);
      inFlight += 1;
      batches += 1;
      if (batches % REMOVE_EVERY_BATCHES === 0 && wal.durableSeq > RETAINED_RECORDS) {
        const upTo = wal.durableSeq - RETAINED_RECORDS;
        process.stdout.write(`remove ${upTo}\n`);
        void wal.removeUpTo(upTo);
      }
      void appended.durable.then(() => {
        inFlight -= 1;
        process.stdout.write(`durable ${appended.firstSeq + count - 1}\n`);
        setImmediate(pump);
      });
    }
  };
  pump();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.argv[2];
  if (dir === undefined) throw new Error('usage: crash-child.fixture.ts <dir>');
  await main(dir);
}
