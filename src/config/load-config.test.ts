import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig, parseSettingFlags } from './load-config.ts';
import { envNameFor, findSetting } from './settings.ts';
import { parseBytes, parseLogLevel } from './setting-types.ts';

function withConfigFile(text: string, run: (path: string, dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), 'trove-config-'));
  try {
    const path = join(dir, 'trove.yml');
    writeFileSync(path, text);
    run(path, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('defaults apply when nothing is set', () => {
  const config = loadConfig({ cwd: tmpdir() });
  assert.equal(config.values['http.host'], '127.0.0.1');
  assert.equal(config.values['http.port'], 9200);
  assert.equal(config.values['path.data'], join(tmpdir(), 'data'));
  assert.equal(config.values['cluster.name'], 'trove');
  assert.deepEqual(config.values['cluster.etcd'], []);
  assert.equal(config.values['http.max_content_length'], 100 * 1024 * 1024);
  assert.equal(config.values['security.enabled'], true);
  assert.equal(config.sources['http.port'], 'default');
  assert.equal(config.configPath, null);
  assert.ok(config.values['node.name'].length > 0);
});

test('file < env < flags precedence, with sources recorded', () => {
  withConfigFile(
    ['http.port: 9300', 'http.host: 0.0.0.0', 'cluster.name: files', 'log.level: warn', 'http.max_content_length: 1mb'].join('\n'),
    (path, dir) => {
      const config = loadConfig({
        configPath: path,
        cwd: dir,
        env: { TROVE_HTTP_PORT: '9400', TROVE_CLUSTER_NAME: 'envs', TROVE_API_KEY: 'not a setting' },
        flags: { 'http.port': '9500' },
      });
      assert.equal(config.values['http.port'], 9500);
      assert.equal(config.sources['http.port'], 'flag');
      assert.equal(config.values['cluster.name'], 'envs');
      assert.equal(config.sources['cluster.name'], 'env');
      assert.equal(config.values['http.host'], '0.0.0.0');
      assert.equal(config.sources['http.host'], 'file');
      assert.equal(config.values['log.level'], 'warn');
      assert.equal(config.values['http.max_content_length'], 1024 * 1024);
      assert.equal(config.sources['path.data'], 'default');
      assert.equal(config.configPath, path);
    },
  );
});

test('nested YAML mappings flatten to dotted keys; lists and lane patterns are accepted', () => {
  withConfigFile(
    ['http:', '  port: 9301', 'cluster.etcd:', '  - http://a:2379', '  - http://b:2379', 'search.lanes.bulk.max_queue: 5'].join('\n'),
    (path) => {
      const config = loadConfig({ configPath: path });
      assert.equal(config.values['http.port'], 9301);
      assert.deepEqual(config.values['cluster.etcd'], ['http://a:2379', 'http://b:2379']);
      assert.equal(config.values['search.lanes.bulk.max_queue'], 5);
      assert.equal(config.sources['search.lanes.bulk.max_queue'], 'file');
    },
  );
});

test('an unknown key in the file is a start-up error naming the key and a suggestion', () => {
  withConfigFile('http.prot: 9200\n', (path) => {
    assert.throws(
      () => loadConfig({ configPath: path }),
      (error: unknown) =>
        error instanceof ConfigError && /\[http\.prot\]/.test(error.message) && /did you mean \[http\.port\]/.test(error.message),
    );
  });
});

test('invalid values name the key and the source', () => {
  assert.throws(() => loadConfig({ env: { TROVE_HTTP_PORT: 'ninety' } }), /http\.port.*TROVE_HTTP_PORT.*integer/);
  assert.throws(() => loadConfig({ flags: { 'http.port': '70000' } }), /http\.port.*at most 65535/);
  assert.throws(() => loadConfig({ flags: { 'log.level': 'loud' } }), /log\.level.*unknown log level/);
  assert.throws(() => loadConfig({ flags: { 'no.such.key': '1' } }), /unknown setting \[no\.such\.key\]/);
  withConfigFile('- a\n- b\n', (path) => assert.throws(() => loadConfig({ configPath: path }), /must be a mapping/));
  withConfigFile('http.port: [\n', (path) => assert.throws(() => loadConfig({ configPath: path }), /not valid YAML/));
  withConfigFile('http.port: 1\nhttp:\n  port: 2\n', (path) =>
    assert.throws(() => loadConfig({ configPath: path }), /set twice/),
  );
  assert.throws(() => loadConfig({ configPath: '/nonexistent/trove.yml' }), /cannot read config file/);
});

test('parseSettingFlags handles dotted keys, aliases, = form and bare booleans', () => {
  assert.deepEqual(parseSettingFlags(['--http.port', '9300', '--data=/tmp/x', '--merge.enabled', '--port', '1']), {
    'http.port': '1',
    'path.data': '/tmp/x',
    'merge.enabled': 'true',
  });
  assert.throws(() => parseSettingFlags(['stray']), /unexpected argument/);
});

test('setting helpers: env names, byte sizes, log directives, patterns', () => {
  assert.equal(envNameFor('node.search.slow_threshold_ms'), 'TROVE_NODE_SEARCH_SLOW_THRESHOLD_MS');
  assert.equal(parseBytes('100mb'), 104857600);
  assert.equal(parseBytes('1.5kb'), 1536);
  assert.equal(parseBytes(2048), 2048);
  assert.throws(() => parseBytes('lots'), /byte size/);
  assert.equal(parseLogLevel('INFO, engine=debug'), 'info,engine=debug');
  assert.throws(() => parseLogLevel('info,engine=chatty'), /unknown log level "chatty"/);
  assert.equal(findSetting('search.lanes.default.max_concurrent')?.dynamic, true);
  assert.equal(findSetting('search.lanes.max_concurrent'), null);
  assert.equal(findSetting('http.port')?.dynamic, false);
});
