import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EngineError } from '../engine/errors.ts';
import { COUNT_SETTINGS, parseCollectionSettings, parseCountSetting, parseSettingsUpdate, parseTextSetting } from './collection-settings.ts';

function refusedNaming(setting: string): (error: unknown) => boolean {
  return (error) => error instanceof EngineError && error.code === 'illegal_argument' && error.message.includes(`[index.${setting}]`);
}

test('defaults, bounds, and the nested, prefixed and bare spellings', () => {
  assert.deepEqual(parseCollectionSettings(undefined), { numberOfShards: 1, numberOfReplicas: 0 });
  assert.deepEqual(parseCollectionSettings({}), { numberOfShards: 1, numberOfReplicas: 0 });
  assert.deepEqual(parseCollectionSettings({ index: {} }), { numberOfShards: 1, numberOfReplicas: 0 }, 'an empty index object is no setting');
  assert.deepEqual(parseCollectionSettings({ number_of_shards: 1024, number_of_replicas: 32 }), { numberOfShards: 1024, numberOfReplicas: 32 });
  assert.deepEqual(parseCollectionSettings({ index: { number_of_shards: '3', number_of_replicas: '2' } }), { numberOfShards: 3, numberOfReplicas: 2 });
  assert.deepEqual(parseCollectionSettings({ 'index.number_of_shards': 2, refresh_interval: '1s' }), { numberOfShards: 2, numberOfReplicas: 0, limits: { refresh_interval: '1s' } });
  assert.deepEqual(parseCollectionSettings({ refresh_interval: null }), { numberOfShards: 1, numberOfReplicas: 0 }, 'null is the default');
  assert.deepEqual(COUNT_SETTINGS.number_of_shards, { min: 1, max: 1024, default: 1 });
  assert.deepEqual(COUNT_SETTINGS.number_of_replicas, { min: 0, max: 32, default: 0 });
});

test('issue 12: huge, negative, fractional and non-numeric counts are refused naming the setting', () => {
  const bad: unknown[] = [2147483648, 1e308, 2 ** 64, -1, 1.5, 'abc', '1.5', '-1', ' 2', '1e3', '', {}, { value: 1 }, [], [1], null, true, Number.NaN, Infinity];
  for (const setting of ['number_of_shards', 'number_of_replicas'] as const) {
    const { min, max } = COUNT_SETTINGS[setting];
    for (const value of [...bad, min - 1, max + 1, String(max + 1)]) {
      for (const settings of [{ [setting]: value }, { index: { [setting]: value } }, { [`index.${setting}`]: value }]) {
        assert.throws(() => parseCollectionSettings(settings), refusedNaming(setting), `${JSON.stringify(settings)}`);
      }
      assert.throws(() => parseCountSetting(setting, value), refusedNaming(setting));
    }
  }
  assert.throws(() => parseCollectionSettings({ number_of_replicas: 2147483648 }), /Failed to parse value \[2147483648\] for setting \[index.number_of_replicas\]: must be an integer between 0 and 32/);
});

test('unknown settings and a settings value that is not an object are refused', () => {
  assert.throws(() => parseCollectionSettings({ number_of_routing_sharts: 2 }), refusedNaming('number_of_routing_sharts'));
  assert.throws(() => parseCollectionSettings({ index: { hasOwnProperty: 1 } }), refusedNaming('hasOwnProperty'));
  assert.throws(() => parseCollectionSettings({ constructor: 1 }), refusedNaming('constructor'));
  assert.throws(() => parseCollectionSettings([]), (error: unknown) => error instanceof EngineError && error.code === 'parsing');
  assert.throws(() => parseCollectionSettings('3'), (error: unknown) => error instanceof EngineError && error.code === 'parsing');
});

test('index limits: kept only when given, bounded, routing shards a multiple of the shards', () => {
  assert.deepEqual(parseCollectionSettings({ index: { max_result_window: '50', max_docvalue_fields_search: 0, number_of_shards: 3, number_of_routing_shards: 6 } }), {
    numberOfShards: 3,
    numberOfReplicas: 0,
    limits: { number_of_routing_shards: 6, max_result_window: 50, max_docvalue_fields_search: 0 },
  });
  assert.throws(() => parseCollectionSettings({ number_of_shards: 3, number_of_routing_shards: 4 }), /source shards \[3\] must be a factor of \[4\]/);
  assert.throws(() => parseCollectionSettings({ max_result_window: 0 }), refusedNaming('max_result_window'));
  assert.throws(() => parseCollectionSettings({ max_result_window: 2147483648 }), refusedNaming('max_result_window'));
  assert.throws(() => parseCollectionSettings({ max_docvalue_fields_search: -1 }), refusedNaming('max_docvalue_fields_search'));
  assert.deepEqual(parseSettingsUpdate({ index: { max_result_window: 20, max_docvalue_fields_search: null } }), {
    staticSettings: [],
    limits: { max_result_window: 20, max_docvalue_fields_search: null },
    text: {},
  });
  assert.deepEqual(parseSettingsUpdate({ 'index.number_of_routing_shards': 4 }).staticSettings, ['index.number_of_routing_shards']);
});

test('settings kept with no effect: time values, byte sizes, the concurrent search mode and soft deletes', () => {
  for (const value of ['1s', '-1', -1, '0', '500ms', '2h', '30m']) assert.equal(parseTextSetting('refresh_interval', value), String(value));
  for (const value of ['soon', '5', 5, '1.5s', '-2s', '', true]) assert.throws(() => parseTextSetting('refresh_interval', value), /as a time value/, String(value));
  assert.throws(() => parseTextSetting('refresh_interval', []), refusedNaming('refresh_interval'));
  for (const value of ['128mb', '1gb', '512b', '-1', '1.5kb']) assert.equal(parseTextSetting('translog.retention.size', value), value);
  assert.throws(() => parseTextSetting('translog.retention.size', 'big'), /as a size in bytes/);
  assert.equal(parseTextSetting('search.concurrent_segment_search.mode', 'auto'), 'auto');
  assert.throws(() => parseTextSetting('search.concurrent_segment_search.mode', 'on'), /one of \[all, none, auto\]/);
  assert.equal(parseTextSetting('soft_deletes.enabled', true), 'true');
  assert.throws(() => parseTextSetting('soft_deletes.enabled', false), /soft-deletes disabled is no longer supported/);
  assert.throws(() => parseTextSetting('soft_deletes.enabled', 'yes'), /only \[true\] or \[false\]/);
  assert.deepEqual(parseCollectionSettings({ index: { soft_deletes: { enabled: 'true' }, translog: { retention: { age: '1h' } }, max_slices_per_scroll: 4, analyze: { max_token_count: 7 } } }), {
    numberOfShards: 1,
    numberOfReplicas: 0,
    limits: { max_slices_per_scroll: 4, 'analyze.max_token_count': 7, 'soft_deletes.enabled': 'true', 'translog.retention.age': '1h' },
  });
  assert.throws(() => parseCollectionSettings({ refresh_interval: { value: '1s' } }), refusedNaming('refresh_interval'));
  assert.throws(() => parseCollectionSettings({ 'analyze.max_token_count': 0 }), refusedNaming('analyze.max_token_count'));
  assert.deepEqual(parseSettingsUpdate({ index: { refresh_interval: null, 'translog.retention.size': '1gb', soft_deletes: { enabled: true } } }), {
    staticSettings: ['index.soft_deletes.enabled'],
    limits: {},
    text: { refresh_interval: null, 'translog.retention.size': '1gb' },
  });
});
