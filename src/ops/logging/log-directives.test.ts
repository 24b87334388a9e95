import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDirectives, levelForTarget, mergeDirectives, parseDirectives, pinoLevel } from './log-directives.ts';

test('a bare level replaces only the default; target directives stay', () => {
  assert.equal(mergeDirectives('info,engine=debug', 'warn'), 'warn,engine=debug');
  assert.equal(mergeDirectives('engine=debug', 'error'), 'error,engine=debug');
});

test('a target directive replaces only that target', () => {
  assert.equal(mergeDirectives('info,engine=debug,http=trace', 'engine=off'), 'info,http=trace,engine=off');
  assert.equal(mergeDirectives('info,engine=debug', 'warn,http=trace'), 'warn,engine=debug,http=trace');
  assert.equal(mergeDirectives('info', 'engine=debug'), 'info,engine=debug');
});

test('parsing normalises case and spaces and rejects unknown levels', () => {
  const parsed = parseDirectives(' WARN , Engine=Debug ');
  assert.equal(parsed.defaultLevel, 'warn');
  assert.deepEqual([...parsed.targets], [['engine', 'debug']]);
  assert.equal(formatDirectives(parsed), 'warn,engine=debug');
  assert.throws(() => parseDirectives('loud'), /unknown log level "loud"/);
  assert.throws(() => parseDirectives('engine=loud'), /unknown log level/);
  assert.throws(() => mergeDirectives('info', 'bad target=info'), /invalid log target/);
});

test('dotted targets follow their nearest parent, then the default', () => {
  const directives = parseDirectives('warn,engine=debug,engine.merge=error');
  assert.equal(levelForTarget(directives, 'engine'), 'debug');
  assert.equal(levelForTarget(directives, 'engine.wal'), 'debug');
  assert.equal(levelForTarget(directives, 'engine.merge.tier'), 'error');
  assert.equal(levelForTarget(directives, 'http'), 'warn');
  assert.equal(levelForTarget(parseDirectives('engine=debug'), 'http'), 'info');
});

test('off is pino silent', () => {
  assert.equal(pinoLevel('off'), 'silent');
  assert.equal(pinoLevel('debug'), 'debug');
});
