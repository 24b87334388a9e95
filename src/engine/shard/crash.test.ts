import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Shard } from './shard.ts';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'crash-child.fixture.ts');

/**
 * Runs the child until it dies (fault point) or is killed `killAfterMs` (plus a random part)
 * after its first acknowledged write; returns its output.
 */
function runChild(dir: string, crashAt: string, killAfterMs: number): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir], {
      env: { ...process.env, TROVE_CRASH_AT: crashAt },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      timer ??= setTimeout(() => child.kill('SIGKILL'), killAfterMs + Math.random() * 500);
    });
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(output);
    });
  });
}

async function verify(dir: string, output: string): Promise<void> {
  const lines = output.split('\n');
  if (!output.endsWith('\n')) lines.pop(); // a line cut by the kill was never fully reported
  const acknowledged = lines.filter((line) => line && !line.startsWith('inc ') && !line.startsWith('upd ') && !line.startsWith('fault '));
  const increments = new Set(lines.filter((line) => line.startsWith('inc ')).map((line) => line.slice(4)));
  const updated = new Set(lines.filter((line) => line.startsWith('upd ')).map((line) => line.slice(4)));
  let withUpdatedBody = 0;
  const shard = await Shard.open({
    dir,
    uuid: 'crash',
    mapping: { properties: { body: { type: 'text' }, n: { type: 'long', inplace: true } } },
  });
  try {
    for (const id of acknowledged) {
      const doc = shard.get(id);
      assert.ok(doc, `acknowledged ${id} lost`);
      const index = Number(id.split('-').at(-1));
      const n = doc.source.n as number;
      if (increments.has(id)) assert.equal(n, index + 1000, `${id} lost its increment`);
      else assert.ok(n === index || n === index + 1000, `${id} has n=${n}`);
      const body = doc.source.body as string;
      if (updated.has(id)) assert.match(body, / updated$/, `${id} lost its field update`);
      if (body.endsWith(' updated')) withUpdatedBody++;
    }
    const searcher = shard.searcher();
    try {
      const total = searcher.query({ query: { match_all: {} }, from: 0, size: 0, trackTotalHits: true }).total.value;
      assert.ok(total >= acknowledged.length, `total ${total} < acknowledged ${acknowledged.length}`);
      const words = searcher.query({ query: { match: { body: 'words' } }, from: 0, size: 0, trackTotalHits: true }).total.value;
      assert.equal(words, total, 'every document is searchable exactly once');
      const matched = searcher.query({ query: { match: { body: 'updated' } }, from: 0, size: 0, trackTotalHits: true }).total.value;
      assert.equal(matched, withUpdatedBody, 'field updates are searchable as their sources show them');
    } finally {
      searcher.release();
    }
  } finally {
    await shard.close();
  }
}

for (const [name, crashAt, killAfterMs] of [
  ['a random moment during WAL appends', '', 300],
  ['the middle of writing a segment', 'segment-file', 20_000],
  ['an epoch before its manifest is replaced', 'manifest', 20_000],
  ['a field update between its WAL append and its overlay', 'fields', 20_000],
  ['a merge that folds field overlays', 'overlay-merge', 20_000],
] as const) {
  test(`kill -9 at ${name} loses no acknowledged write`, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'trove-crash-'));
    try {
      const first = await runChild(dir, crashAt, killAfterMs);
      assert.ok(first.length > 0, 'child acknowledged nothing');
      if (crashAt !== '') assert.match(first, new RegExp(`^fault ${crashAt}$`, 'm'), 'the fault point killed the child');
      await verify(dir, first);
      // Crash again on the recovered shard, then verify the union.
      const second = await runChild(dir, '', 200);
      await verify(dir, first + second);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
