import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, rm, stat, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { LocalCoordinator } from '../../cluster/local/local-coordinator.ts';
import { ApiKeys } from './api-keys.ts';
import { BootstrapKeyError, bootstrapKeyPath, ensureBootstrapKey } from './bootstrap.ts';

/** Collects log lines so the test can check they never carry the key. */
function capturingLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const logger: Logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(line) });
  return { logger, lines };
}

async function withCoordinator(run: (coordinator: LocalCoordinator, dataPath: string) => Promise<void>): Promise<void> {
  const dataPath = await mkdtemp(join(tmpdir(), 'trove-bootstrap-'));
  const coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
  try {
    await run(coordinator, dataPath);
  } finally {
    await coordinator.close();
    await rm(dataPath, { recursive: true, force: true });
  }
}

test('first start: an admin key is written once to bootstrap-admin.key (0600), only its hash is stored', async () => {
  await withCoordinator(async (coordinator, dataPath) => {
    const { logger, lines } = capturingLogger();
    assert.equal(await ensureBootstrapKey({ coordinator, dataPath, logger }), 'generated');
    const path = bootstrapKeyPath(dataPath);
    const key = (await readFile(path, 'utf8')).trim();
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const [record] = coordinator.listApiKeys();
    assert.equal(record.role, 'admin');
    assert.equal(record.namespaces, null);
    assert.equal(record.name, 'bootstrap-admin');

    const keys = new ApiKeys({ coordinator, logger });
    assert.ok(keys.authenticate(key).ok);
    await keys.close();
    assert.ok(!(await readFile(join(dataPath, 'catalog', 'catalog.json'), 'utf8')).includes(key));
    assert.ok(lines.some((line) => line.includes(path)), 'the log names the file');
    assert.ok(!lines.some((line) => line.includes(key)), 'the log never carries the key');

    assert.equal(await ensureBootstrapKey({ coordinator, dataPath, logger }), 'existing');
    assert.equal((await readFile(path, 'utf8')).trim(), key, 'later starts leave the file alone');
    assert.equal(coordinator.listApiKeys().length, 1);
  });
});

test('TROVE_API_KEY supplies the first key instead: no file is written', async () => {
  await withCoordinator(async (coordinator, dataPath) => {
    const { logger, lines } = capturingLogger();
    const supplied = 'operator-chosen-key-0123456789';
    assert.equal(await ensureBootstrapKey({ coordinator, dataPath, suppliedKey: supplied, logger }), 'supplied');
    await assert.rejects(stat(bootstrapKeyPath(dataPath)), { code: 'ENOENT' });
    const keys = new ApiKeys({ coordinator, logger });
    const result = keys.authenticate(supplied);
    assert.ok(result.ok);
    assert.equal(result.record.origin, 'supplied');
    assert.equal(keys.authenticate(`${supplied}x`).ok, false);
    await keys.close();
    assert.ok(!lines.some((line) => line.includes(supplied)));

    assert.equal(await ensureBootstrapKey({ coordinator, dataPath, suppliedKey: 'another-operator-key-9876543210', logger }), 'existing');
    assert.equal(coordinator.listApiKeys().length, 1, 'a key supplied after the first start adds nothing');
  });
});

test('a supplied key that is too weak stops the start and nothing is stored', async () => {
  await withCoordinator(async (coordinator, dataPath) => {
    const { logger } = capturingLogger();
    await assert.rejects(ensureBootstrapKey({ coordinator, dataPath, suppliedKey: 'secret', logger }), BootstrapKeyError);
    assert.equal(coordinator.listApiKeys().length, 0);
  });
});

test('a bootstrap key file left by a start that crashed before storing the hash is replaced', async () => {
  await withCoordinator(async (coordinator, dataPath) => {
    const { logger } = capturingLogger();
    const failing = Object.create(coordinator) as LocalCoordinator;
    failing.createFirstApiKey = async () => {
      throw new Error('crash before the catalog write');
    };
    await assert.rejects(ensureBootstrapKey({ coordinator: failing, dataPath, logger }), /crash/);
    const stale = (await readFile(bootstrapKeyPath(dataPath), 'utf8')).trim();
    assert.equal(coordinator.listApiKeys().length, 0);

    assert.equal(await ensureBootstrapKey({ coordinator, dataPath, logger }), 'generated');
    const fresh = (await readFile(bootstrapKeyPath(dataPath), 'utf8')).trim();
    assert.notEqual(fresh, stale);
    const keys = new ApiKeys({ coordinator, logger });
    assert.ok(keys.authenticate(fresh).ok);
    assert.equal(keys.authenticate(stale).ok, false);
    await keys.close();
  });
});

test('when every admin key has expired, TROVE_API_KEY on start creates the admin key [recovery-admin]', async () => {
  await withCoordinator(async (coordinator, dataPath) => {
    const { logger, lines } = capturingLogger();
    const clock = { now: Date.now() };
    assert.equal(await ensureBootstrapKey({ coordinator, dataPath, logger, now: () => clock.now }), 'generated');
    const first = coordinator.listApiKeys()[0];
    const keys = new ApiKeys({ coordinator, logger, now: () => clock.now });
    const temporary = await keys.create({ name: 'temporary-admin', role: 'admin', expiresInSecs: 60 });
    const reader = await keys.create({ name: 'reader', role: 'read' });
    await assert.rejects(keys.revoke(first.id), /valid for at least another hour/, 'the revoke itself is refused');
    await coordinator.deleteApiKey(first.id); // as a version without that check could have done
    clock.now += 61_000;
    assert.equal(keys.authenticate(temporary.key).ok, false, 'the only admin key has expired');

    assert.equal(await ensureBootstrapKey({ coordinator, dataPath, logger, now: () => clock.now }), 'no_admin');
    assert.ok(lines.some((line) => line.includes('TROVE_API_KEY') && line.includes('recovery-admin')), 'the log says how to recover');
    await assert.rejects(ensureBootstrapKey({ coordinator, dataPath, suppliedKey: reader.key, logger, now: () => clock.now }), BootstrapKeyError, 'an existing key is not promoted');

    const supplied = 'operator-recovery-key-0123456789';
    assert.equal(await ensureBootstrapKey({ coordinator, dataPath, suppliedKey: supplied, logger, now: () => clock.now }), 'recovered');
    const result = keys.authenticate(supplied);
    assert.ok(result.ok);
    assert.equal(result.record.name, 'recovery-admin');
    assert.equal(result.record.role, 'admin');
    assert.equal(result.record.namespaces, null);
    assert.equal(await ensureBootstrapKey({ coordinator, dataPath, suppliedKey: 'yet-another-operator-key-0123', logger, now: () => clock.now }), 'existing');
    assert.ok(!lines.some((line) => line.includes(supplied)), 'the log never carries the key');
    await keys.close();
  });
});
