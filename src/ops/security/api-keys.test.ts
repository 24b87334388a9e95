import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { LocalCoordinator } from '../../cluster/local/local-coordinator.ts';
import { EngineError } from '../../engine/errors.ts';
import { ApiKeys, MAX_EXPIRES_IN_SECS } from './api-keys.ts';
import { SecurityError } from './security-error.ts';

const logger = pino({ level: 'silent' });

/** A real embedded coordinator on a temporary data path, with a clock the test moves. */
async function withKeys(run: (keys: ApiKeys, context: { coordinator: LocalCoordinator; clock: { now: number }; dataPath: string }) => Promise<void>): Promise<void> {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-keys-'));
  const clock = { now: 1_700_000_000_000 };
  const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
  const keys = new ApiKeys({ coordinator, logger, now: () => clock.now, lastUsedFlushMs: 3_600_000 });
  try {
    await run(keys, { coordinator, clock, dataPath });
  } finally {
    await keys.close();
    await coordinator.close();
    await rm(dataPath, { recursive: true, force: true });
  }
}

function hasCode(code: string): (error: unknown) => boolean {
  return (error) => error instanceof SecurityError && error.code === code;
}

test('an issued key authenticates; only its hash reaches the catalog file', async () => {
  await withKeys(async (keys, { dataPath }) => {
    const { record, key } = await keys.create({ name: 'app', role: 'read', namespaces: ['shop', 'blog', 'shop'] });
    assert.deepEqual(record.namespaces, ['blog', 'shop'], 'namespaces are deduplicated and sorted');
    const result = keys.authenticate(key);
    assert.ok(result.ok);
    assert.equal(result.record.id, record.id);
    const file = await readFile(join(dataPath, 'catalog', 'catalog.json'), 'utf8');
    assert.ok(file.includes(record.hash));
    assert.ok(!file.includes(key), 'the key itself is never stored');
    const wrongSecret = key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A');
    assert.deepEqual(keys.authenticate(wrongSecret), { ok: false, reason: 'unknown', keyId: record.id });
    assert.deepEqual(keys.authenticate('not-a-key'), { ok: false, reason: 'unknown', keyId: null });
  });
});

test('keys expire at their deadline and stay listed as expired', async () => {
  await withKeys(async (keys, { clock }) => {
    const { record, key } = await keys.create({ name: 'short', role: 'write', expiresInSecs: 60 });
    assert.equal(record.expiresAt, clock.now + 60_000);
    clock.now += 59_999;
    assert.ok(keys.authenticate(key).ok);
    clock.now += 1;
    assert.deepEqual(keys.authenticate(key), { ok: false, reason: 'expired', keyId: record.id });
    assert.equal(keys.get(record.id).expired, true);
  });
});

test('a revoked key fails on the very next authentication; unknown ids are api_key_not_found', async () => {
  await withKeys(async (keys) => {
    await keys.create({ name: 'root', role: 'admin' });
    const { record, key } = await keys.create({ name: 'doomed', role: 'admin' });
    assert.ok(keys.authenticate(key).ok);
    const revoked = await keys.revoke(record.id);
    assert.equal(revoked.id, record.id);
    assert.equal(keys.authenticate(key).ok, false);
    await assert.rejects(keys.revoke(record.id), hasCode('api_key_not_found'));
    assert.throws(() => keys.get(record.id), hasCode('api_key_not_found'));
  });
});

test('the last usable admin key cannot be revoked; scoped or expired admins do not count', async () => {
  await withKeys(async (keys, { clock }) => {
    const root = await keys.create({ name: 'root', role: 'admin' });
    const scoped = await keys.create({ name: 'tenant-admin', role: 'admin', namespaces: ['shop'] });
    const soon = await keys.create({ name: 'temporary-admin', role: 'admin', expiresInSecs: 10 });
    clock.now += 10_000;
    await assert.rejects(keys.revoke(root.record.id), hasCode('last_admin_key'));
    await keys.revoke(scoped.record.id);
    await keys.revoke(soon.record.id);
    const second = await keys.create({ name: 'second', role: 'admin' });
    await keys.revoke(root.record.id);
    await assert.rejects(keys.revoke(second.record.id), hasCode('last_admin_key'));
  });
});

test('a revoke that leaves only admin keys expiring within the hour is refused', async () => {
  await withKeys(async (keys) => {
    const root = await keys.create({ name: 'root', role: 'admin' });
    const expiring = await keys.create({ name: 'expiring-admin', role: 'admin', expiresInSecs: 1800 });
    await assert.rejects(keys.revoke(root.record.id), hasCode('last_admin_key'), 'the other admin is gone in 30 minutes');
    const lasting = await keys.create({ name: 'lasting-admin', role: 'admin', expiresInSecs: 7200 });
    await keys.revoke(root.record.id);
    await keys.revoke(expiring.record.id);
    await assert.rejects(keys.revoke(lasting.record.id), hasCode('last_admin_key'));
    const reader = await keys.create({ name: 'reader', role: 'read' });
    await keys.revoke(reader.record.id);
  });
});

test('lifetimes that are not whole seconds from 1 s to ten years are refused and nothing is stored', async () => {
  await withKeys(async (keys, { coordinator }) => {
    for (const expiresInSecs of [Infinity, -Infinity, Number.NaN, 0, -1, 1.5, MAX_EXPIRES_IN_SECS + 1, 1e308]) {
      await assert.rejects(
        keys.create({ name: 'bad', role: 'read', expiresInSecs }),
        (error: unknown) => error instanceof EngineError && error.code === 'illegal_argument' && /\[expires_in_secs\]/.test(error.message),
        String(expiresInSecs),
      );
    }
    assert.equal(coordinator.listApiKeys().length, 0);
    const longest = await keys.create({ name: 'ten-years', role: 'read', expiresInSecs: MAX_EXPIRES_IN_SECS });
    assert.equal(longest.record.expiresAt, longest.record.createdAt + MAX_EXPIRES_IN_SECS * 1000);
  });
});

test('last use is noted in memory and written in one catalog change per flush', async () => {
  await withKeys(async (keys, { coordinator, clock }) => {
    const first = await keys.create({ name: 'one', role: 'read' });
    const second = await keys.create({ name: 'two', role: 'read' });
    const revision = coordinator.revision;
    for (let request = 0; request < 500; request++) {
      clock.now += 1;
      assert.ok(keys.authenticate(request % 2 === 0 ? first.key : second.key).ok);
    }
    assert.equal(coordinator.revision, revision, 'authenticating writes nothing');
    assert.equal(coordinator.getApiKey(first.record.id)?.lastUsedAt, null);
    assert.equal(keys.get(second.record.id).lastUsedAt, clock.now, 'listings see the noted time at once');

    await keys.flushLastUsed();
    assert.equal(coordinator.revision, revision + 1, 'one change for every key used');
    assert.equal(coordinator.getApiKey(first.record.id)?.lastUsedAt, clock.now - 1);
    assert.equal(coordinator.getApiKey(second.record.id)?.lastUsedAt, clock.now);
    await keys.flushLastUsed();
    assert.equal(coordinator.revision, revision + 1, 'nothing new, nothing written');
  });
});

test('listings never carry the hash', async () => {
  await withKeys(async (keys) => {
    const { record } = await keys.create({ name: 'app', role: 'monitor' });
    const listed = keys.list();
    assert.equal(listed.length, 1);
    assert.deepEqual(Object.keys(listed[0]).sort(), ['createdAt', 'expired', 'expiresAt', 'id', 'lastUsedAt', 'name', 'namespaces', 'role']);
    assert.ok(!JSON.stringify(listed).includes(record.hash));
  });
});
