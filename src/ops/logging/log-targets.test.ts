import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { LogTargets } from './log-targets.ts';

/** A pino root writing synchronously into an array of parsed lines. */
function capture(level: string): { lines: Array<Record<string, unknown>>; root: pino.Logger } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, root: pino({ level }, stream) };
}

function messages(lines: Array<Record<string, unknown>>): string[] {
  return lines.map((line) => `${String(line.component ?? '-')}:${String(line.msg)}`);
}

test('target directives apply to target loggers and to loggers derived from them', async () => {
  const { lines, root } = capture('info');
  const logs = new LogTargets(root, 'info,engine=debug');
  const engine = logs.target('engine');
  const shard = engine.child({ shard: 0 });
  const http = logs.target('http');
  shard.debug('shard debug 1');
  http.debug('http debug 1');
  http.info('http info 1');

  logs.apply('info,engine=off,http=debug');
  shard.info('shard info 2');
  http.debug('http debug 2');
  const request = http.child({ reqId: 1 });
  request.trace('request trace 2');

  logs.apply('warn,http=trace');
  request.trace('request trace 3');
  shard.info('shard info 3');
  shard.warn('shard warn 3');
  root.info('root info 3');
  await new Promise((resolve) => setImmediate(resolve));

  assert.deepEqual(messages(lines), [
    'engine:shard debug 1',
    'http:http info 1',
    'http:http debug 2',
    'http:request trace 3',
    'engine:shard warn 3',
  ]);
  assert.equal(lines[0].shard, 0);
  assert.deepEqual(logs.levels(), { engine: 'warn', http: 'trace' });
});

test('the default level starts at the root logger level the caller chose', () => {
  const { root } = capture('silent');
  const logs = new LogTargets(root, 'info,engine=debug');
  assert.equal(logs.target('http').level, 'silent');
  assert.equal(logs.target('engine').level, 'debug');
  logs.apply('error');
  assert.equal(root.level, 'error');
  assert.equal(logs.target('http').level, 'error');
});
