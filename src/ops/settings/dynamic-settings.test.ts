import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { loadConfig } from '../../config/load-config.ts';
import { DynamicSettings, type SettingsChange } from './dynamic-settings.ts';
import { SettingsError } from './settings-error.ts';

const logger = pino({ level: 'silent' });

function open(flags: Record<string, string> = {}): DynamicSettings {
  const config = loadConfig({ flags: { 'path.data': '/trove-test-data', ...flags }, env: {} });
  return new DynamicSettings({
    config,
    logger,
    implicitKeys: ['search.lanes.default.max_concurrent', 'search.lanes.default.max_queue'],
  });
}

test('the view lists every key with its value and source, default lane included', () => {
  const settings = open({ 'search.default_timeout_ms': '250', 'search.lanes.bulk.max_queue': '5' });
  const view = settings.view();
  assert.equal(view.settings['search.default_timeout_ms'], 250);
  assert.equal(view.sources['search.default_timeout_ms'], 'flag');
  assert.equal(view.sources['trash.retention_secs'], 'default');
  assert.equal(view.sources['search.lanes.default.max_queue'], 'default');
  assert.equal(view.settings['search.lanes.default.max_queue'], 1000);
  assert.equal(view.settings['search.lanes.bulk.max_queue'], 5);
  assert.equal(view.sources['search.lanes.bulk.max_concurrent'], 'default');
  assert.ok((view.settings['search.lanes.bulk.max_concurrent'] as number) >= 1);
  assert.deepEqual(view.transient, {});
  assert.deepEqual(Object.keys(view.settings), Object.keys(view.settings).sort());
});

test('an update applies every key at once, with transient sources; null resets to the configuration', () => {
  const settings = open({ 'trash.retention_secs': '60' });
  const change = settings.update({ 'trash.retention_secs': 5, 'node.search.slow_threshold_ms': '20' });
  assert.deepEqual(change.changed, ['node.search.slow_threshold_ms', 'trash.retention_secs']);
  assert.equal(settings.values()['trash.retention_secs'], 5);
  assert.equal(settings.view().sources['node.search.slow_threshold_ms'], 'transient');
  settings.update({ 'trash.retention_secs': null });
  assert.equal(settings.values()['trash.retention_secs'], 60);
  assert.equal(settings.view().sources['trash.retention_secs'], 'flag');
  assert.deepEqual(settings.view().transient, { 'node.search.slow_threshold_ms': 20 });
});

test('unknown, static and invalid keys are all named and nothing is applied', () => {
  const settings = open();
  const before = settings.values();
  assert.throws(
    () => settings.update({ 'search.default_timeout_ms': 100, 'trash.retention_sec': 1, 'path.data': '/x', 'epoch.max_docs': -4 }),
    (error: unknown) => {
      assert.ok(error instanceof SettingsError);
      assert.deepEqual(error.keys, ['trash.retention_sec', 'path.data', 'epoch.max_docs']);
      assert.match(error.message, /unknown setting \[trash\.retention_sec\] \(did you mean \[trash\.retention_secs\]\?\)/);
      assert.match(error.message, /setting \[path\.data\] is not dynamic/);
      assert.match(error.message, /invalid value for setting \[epoch\.max_docs\]: must be at least 1, got -4/);
      return true;
    },
  );
  assert.equal(settings.values(), before);
  assert.deepEqual(settings.view().transient, {});
});

test('log.level changes merge into the current directives', () => {
  const settings = open({ 'log.level': 'info,engine=debug' });
  settings.update({ 'log.level': 'warn' });
  assert.equal(settings.values()['log.level'], 'warn,engine=debug');
  settings.update({ 'log.level': 'http=trace,engine=off' });
  assert.equal(settings.values()['log.level'], 'warn,http=trace,engine=off');
  settings.update({ 'log.level': null });
  assert.equal(settings.values()['log.level'], 'info,engine=debug');
});

test('listeners hear about the keys they watch, once per applied change', () => {
  const settings = open();
  const heard: SettingsChange[] = [];
  const trash: number[] = [];
  const stopAll = settings.onChange((change) => heard.push(change));
  settings.onChange((change) => trash.push(change.values['trash.retention_secs']), ['trash.retention_secs']);
  settings.onChange(() => {
    throw new Error('a broken listener does not stop the others');
  }, ['search.lanes.']);
  settings.update({ 'search.lanes.bulk.max_concurrent': 2 });
  settings.update({ 'trash.retention_secs': 30 });
  settings.update({ 'trash.retention_secs': 30 });
  assert.equal(heard.length, 2);
  assert.deepEqual(heard[0].changed, ['search.lanes.bulk.max_concurrent', 'search.lanes.bulk.max_queue']);
  assert.equal(heard[0].previous['search.lanes.bulk.max_concurrent'], undefined);
  assert.deepEqual(trash, [30]);
  stopAll();
  settings.update({ 'search.lanes.bulk.max_concurrent': null });
  assert.equal(heard.length, 2);
  assert.equal(settings.values()['search.lanes.bulk.max_queue'], undefined);
});
