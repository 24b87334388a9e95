/**
 * Job records on disk, one file per job under `<path.data>/jobs/`, named by the job's sequence
 * number (`17.json`):
 *
 *   {"format": "trove-job", "version": 1, "job": {id, type, collection, state, passes, ...}}
 *
 * Every write replaces the file atomically (temporary file, fsync, rename, fsync of the
 * directory), so after a crash a record holds its last complete state. Leftover temporary files
 * are removed at open; a record that cannot be read is logged and removed (a job record is a
 * report, not data: losing one loses no document).
 */
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { TEMP_SUFFIX, writeFileAtomic } from '../engine/directory/atomic-file.ts';
import { jobSequence, type Job, type JobState } from './job.ts';

const FORMAT = 'trove-job';
const VERSION = 1;
const STATES: ReadonlySet<JobState> = new Set<JobState>(['queued', 'running', 'done', 'failed']);

/** Reads and writes the job records of one node. */
export class JobStore {
  private constructor(
    readonly dir: string,
    private readonly logger: Logger,
  ) {}

  /** Creates the directory if needed, clears interrupted writes and loads every readable record. */
  static async open(dir: string, logger: Logger): Promise<{ store: JobStore; jobs: Job[] }> {
    await mkdir(dir, { recursive: true });
    const store = new JobStore(dir, logger);
    const jobs: Job[] = [];
    for (const name of await readdir(dir)) {
      const path = join(dir, name);
      if (name.endsWith(TEMP_SUFFIX)) {
        await rm(path, { force: true });
        continue;
      }
      if (!name.endsWith('.json')) continue;
      try {
        jobs.push(parseRecord(await readFile(path, 'utf8')));
      } catch (error) {
        logger.warn({ file: path, reason: (error as Error).message }, 'removing an unreadable job record');
        await rm(path, { force: true });
      }
    }
    jobs.sort((left, right) => (jobSequence(left.id) ?? 0) - (jobSequence(right.id) ?? 0));
    return { store, jobs };
  }

  /** Durably replaces the record of `job` with its current state. */
  async save(job: Job): Promise<void> {
    await writeFileAtomic(this.fileOf(job), JSON.stringify({ format: FORMAT, version: VERSION, job }) + '\n');
  }

  /** Deletes the record of `job` (old finished jobs beyond the retained number). */
  async remove(job: Job): Promise<void> {
    await rm(this.fileOf(job), { force: true });
  }

  private fileOf(job: Job): string {
    return join(this.dir, `${jobSequence(job.id)}.json`);
  }
}

/** Parses one record file, checking the fields the queue relies on. */
function parseRecord(text: string): Job {
  const document = JSON.parse(text) as { format?: unknown; version?: unknown; job?: Partial<Job> };
  if (document.format !== FORMAT) throw new Error(`not a ${FORMAT} record`);
  if (document.version !== VERSION) throw new Error(`unsupported job record version [${String(document.version)}]`);
  const job = document.job;
  if (!job || typeof job.id !== 'string' || jobSequence(job.id) === null) throw new Error('the record has no valid job id');
  if (!STATES.has(job.state as JobState) || !Array.isArray(job.passes)) throw new Error(`job [${job.id}] has no valid state or passes`);
  for (const pass of job.passes) {
    if (!STATES.has(pass?.state) || typeof pass.shardUuid !== 'string') throw new Error(`job [${job.id}] has an invalid pass`);
  }
  return job as Job;
}
