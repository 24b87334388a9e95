/** Runs a bench worker script in its own Node process and returns the JSON it reports. */
import { spawn } from 'node:child_process';
import path from 'node:path';

/** Repository root (workers run from there so `--import tsx` resolves). */
export const REPO_ROOT = path.resolve(import.meta.dirname, '..');

/** Heap ceiling for workers: MiniSearch at 100k documents needs more than Node's default. */
const MAX_OLD_SPACE_MB = 8192;

/**
 * Starts `node --expose-gc --import tsx <script> <request JSON>`, relays its stderr, and resolves
 * with the payload of its `RESULT {json}` stdout line; rejects if it exits without one.
 */
export function runWorkerProcess<Result>(script: string, request: object): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--expose-gc', `--max-old-space-size=${MAX_OLD_SPACE_MB}`, '--import', 'tsx', script, JSON.stringify(request)],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let output = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const line = output.split('\n').find((candidate) => candidate.startsWith('RESULT '));
      if (line) {
        resolve(JSON.parse(line.slice('RESULT '.length)) as Result);
        return;
      }
      const tail = output.trim().split('\n').slice(-5).join('\n');
      reject(new Error(`${path.basename(script)} exited with ${signal ?? code} and no result${tail ? `:\n${tail}` : ''}`));
    });
  });
}
