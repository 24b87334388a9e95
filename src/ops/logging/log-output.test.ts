import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { LogFormat } from '../../config/load-config.ts';
import { createRootLogger, effectiveLogFormat, prettyStream, withoutRepeatedFields } from './log-output.ts';

/** A pretty logger writing into an array of lines. */
function prettyLogger(colorize: boolean) {
  const lines: string[] = [];
  const logger = pino({ base: { node: 'n1' } }, prettyStream({ write: (text: string) => lines.push(text) }, colorize));
  return { logger, lines };
}

test('auto is pretty on a terminal and JSON otherwise; json and pretty are taken as they are', () => {
  assert.equal(effectiveLogFormat('auto', true), 'pretty');
  assert.equal(effectiveLogFormat('auto', false), 'json');
  assert.equal(effectiveLogFormat('json', true), 'json');
  assert.equal(effectiveLogFormat('pretty', false), 'pretty');
});

/** What a root logger of `format` writes for one event to an output that is (or is not) a terminal. */
function writtenBy(format: LogFormat, isTTY: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'trove-log-'));
  try {
    const fd = openSync(join(dir, 'out'), 'w');
    createRootLogger({ level: 'info', nodeName: 'n1', format, output: { fd, isTTY } }).info('hello');
    closeSync(fd);
    return readFileSync(join(dir, 'out'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the root logger writes pretty coloured lines to a terminal and JSON lines elsewhere, as log.format says', () => {
  assert.match(writtenBy('auto', true), /^\[[\d:.]+\] \u001b\[32mINFO\u001b\[39m: .*hello/);
  assert.equal(JSON.parse(writtenBy('auto', false)).msg, 'hello');
  assert.equal(JSON.parse(writtenBy('json', true)).node, 'n1');
  assert.match(writtenBy('pretty', false), /^\[[\d:.]+\] INFO: hello\n$/);
});

test('a pretty line is one line per event: time, level, [target], message, then the other fields', () => {
  const { logger, lines } = prettyLogger(false);
  logger.child({ component: 'security' }).warn({ path: '/srv/trove/bootstrap-admin.key', role: 'admin' }, 'wrote the key to /srv/trove/bootstrap-admin.key');
  logger.info({ signal: 'SIGTERM', nested: { a: 1 } }, 'stopping');
  logger.error({ err: new Error('boom') }, 'failed');
  assert.equal(lines.length, 3);
  for (const line of lines) assert.equal(line.trimEnd().split('\n').length, 1, line);
  assert.match(lines[0]!, /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: \[security\] wrote the key to \/srv\/trove\/bootstrap-admin\.key \{"role":"admin"\}\n$/);
  assert.match(lines[1]!, /INFO: stopping \{"signal":"SIGTERM","nested":\{"a":1\}\}/);
  assert.match(lines[2]!, /ERROR: failed \{"err":\{"type":"Error","message":"boom","stack":"Error: boom\\n/);
  assert.doesNotMatch(lines.join(''), /"node"|"pid"|"hostname"/);
});

test('pretty lines are coloured when asked to', () => {
  const { logger, lines } = prettyLogger(true);
  logger.error('failed');
  assert.match(lines[0]!, /\u001b\[/);
});

test('fields the message already says as a word are left out; parts of words, numbers and non-JSON lines stay', () => {
  assert.deepEqual(withoutRepeatedFields('{"msg":"on http://a:1 (node [x1]) for bob-admin","address":"http://a:1","id":"x1","role":"admin","n":12}'), {
    msg: 'on http://a:1 (node [x1]) for bob-admin',
    role: 'admin',
    n: 12,
  });
  assert.equal(withoutRepeatedFields('plain text'), 'plain text');
});
