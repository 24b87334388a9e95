import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ApiKeyRecord, CatalogChange } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import { LocalCoordinator } from './local-coordinator.ts';

function key(id: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord {
  return {
    id,
    name: `key-${id}`,
    role: 'read',
    namespaces: null,
    hash: `sha256:${'0'.repeat(64)}`,
    origin: 'issued',
    createdAt: 1,
    expiresAt: null,
    lastUsedAt: null,
    ...overrides,
  };
}

async function withDataPath(run: (dataPath: string) => Promise<void>): Promise<void> {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-catalog-keys-'));
  try {
    await run(dataPath);
  } finally {
    await rm(dataPath, { recursive: true, force: true });
  }
}

test('API key records are catalog changes: persisted, announced, and kept across restarts', async () => {
  await withDataPath(async (dataPath) => {
    const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    const seen: CatalogChange['kind'][] = [];
    coordinator.watch((event) => void seen.push(...event.changes.map((change) => change.kind)));
    const before = coordinator.revision;
    await coordinator.createApiKey(key('aaaaaaaaaaaaaaaa'));
    await coordinator.createApiKey(key('bbbbbbbbbbbbbbbb', { namespaces: ['shop'] }));
    await assert.rejects(coordinator.createApiKey(key('aaaaaaaaaaaaaaaa')), (error) => error instanceof CatalogError && error.code === 'resource_already_exists');
    assert.equal(coordinator.revision, before + 2);
    assert.deepEqual(coordinator.listApiKeys().map((record) => record.id), ['aaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbb']);
    assert.equal((await coordinator.deleteApiKey('aaaaaaaaaaaaaaaa'))?.id, 'aaaaaaaaaaaaaaaa');
    assert.equal(await coordinator.deleteApiKey('aaaaaaaaaaaaaaaa'), null);
    assert.equal(coordinator.getApiKey('aaaaaaaaaaaaaaaa'), null);
    assert.deepEqual(seen, ['api_key_created', 'api_key_created', 'api_key_deleted']);
    await coordinator.close();

    const reopened = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    assert.deepEqual(reopened.getApiKey('bbbbbbbbbbbbbbbb')?.namespaces, ['shop']);
    await reopened.close();
  });
});

test('createFirstApiKey stores a key only while the catalog holds none', async () => {
  await withDataPath(async (dataPath) => {
    const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    const results = await Promise.all([coordinator.createFirstApiKey(key('1111111111111111')), coordinator.createFirstApiKey(key('2222222222222222'))]);
    assert.deepEqual(results, [true, false]);
    assert.deepEqual(coordinator.listApiKeys().map((record) => record.id), ['1111111111111111']);
    await coordinator.close();
  });
});

test('recordApiKeyUse writes many keys in one change, skips unknown ids and never goes back in time', async () => {
  await withDataPath(async (dataPath) => {
    const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    await coordinator.createApiKey(key('aaaaaaaaaaaaaaaa'));
    await coordinator.createApiKey(key('bbbbbbbbbbbbbbbb'));
    const before = coordinator.revision;
    await coordinator.recordApiKeyUse(new Map([['aaaaaaaaaaaaaaaa', 500], ['bbbbbbbbbbbbbbbb', 700], ['cccccccccccccccc', 900]]));
    assert.equal(coordinator.revision, before + 1);
    await coordinator.recordApiKeyUse(new Map([['aaaaaaaaaaaaaaaa', 400]]));
    assert.equal(coordinator.revision, before + 1, 'an older time changes nothing');
    assert.equal(coordinator.getApiKey('aaaaaaaaaaaaaaaa')?.lastUsedAt, 500);
    assert.equal(coordinator.getApiKey('bbbbbbbbbbbbbbbb')?.lastUsedAt, 700);
    await coordinator.close();
  });
});

test('a catalog file written before API keys existed loads with no key', async () => {
  await withDataPath(async (dataPath) => {
    const first = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    await first.close();
    const file = join(dataPath, 'catalog', 'catalog.json');
    const document = JSON.parse(await readFile(file, 'utf8'));
    delete document.catalog.apiKeys;
    await writeFile(file, JSON.stringify(document));
    const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
    assert.deepEqual(coordinator.listApiKeys(), []);
    await coordinator.createApiKey(key('aaaaaaaaaaaaaaaa'));
    assert.equal(coordinator.listApiKeys().length, 1);
    await coordinator.close();
  });
});
