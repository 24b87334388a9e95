import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalCoordinator } from '../../cluster/local/local-coordinator.ts';
import { resolveTarget } from '../../cluster/names.ts';
import { AuthCounters } from '../../ops/security/auth-counters.ts';
import { SecurityError } from '../../ops/security/security-error.ts';
import { AuthScope, EMPTY_TARGET, type Principal } from './auth-scope.ts';

let dataPath: string;
let coordinator: LocalCoordinator;
const MAPPING = { properties: {} };

before(async () => {
  dataPath = await mkdtemp(join(tmpdir(), 'trove-scope-'));
  coordinator = await LocalCoordinator.open({ dataPath, clusterName: 'trove' });
  await coordinator.createNamespace('team-a');
  await coordinator.createNamespace('team-b');
  const collections: Array<[string, string]> = [
    ['a-logs', 'team-a'],
    ['a-users', 'team-a'],
    ['b-logs', 'team-b'],
    ['common', 'default'],
  ];
  for (const [name, namespace] of collections) {
    await coordinator.createCollection({ name, namespace, settings: { number_of_shards: 1, number_of_replicas: 0 }, mapping: MAPPING });
  }
});

after(async () => {
  await coordinator.close();
  await rm(dataPath, { recursive: true, force: true });
});

function scope(namespaces: string[] | null, counters = new AuthCounters()): AuthScope {
  const principal: Principal = { kind: 'api_key', id: '0123456789abcdef', name: 'tenant', role: 'read', namespaces };
  return new AuthScope(principal, coordinator, counters);
}

const forbidden = (pattern: RegExp) => (error: unknown) =>
  error instanceof SecurityError && error.code === 'security_forbidden' && pattern.test(error.message);

test('an unrestricted scope allows everything and leaves targets alone', () => {
  const all = scope(null);
  assert.equal(all.unrestricted, true);
  assert.equal(all.allows('team-b'), true);
  assert.equal(all.allowsCollection('b-logs'), true);
  assert.equal(all.narrowTarget('*'), '*');
  all.requireConcreteCollections('b-logs,a*');
  all.requireUnrestricted('empty the trash');
});

test('a limited scope allows only its namespaces and refuses names outside them with a 403 naming only its own', () => {
  const counters = new AuthCounters();
  const teamA = scope(['team-a'], counters);
  assert.equal(teamA.allows('team-a'), true);
  assert.equal(teamA.allows('team-b'), false);
  assert.equal(teamA.allowsCollection('a-logs'), true);
  assert.equal(teamA.allowsCollection('b-logs'), false);
  assert.equal(teamA.allowsCollection('missing'), false, 'listings show only what exists in scope');
  assert.throws(() => teamA.requireNamespace('team-b'), forbidden(/limited to namespaces \[team-a\]; .* outside the key's namespaces$/));
  assert.throws(() => teamA.requireNamespace('team-b'), (error: unknown) => !String((error as Error).message).includes('team-b'));
  assert.throws(() => teamA.requireCollection('b-logs'), forbidden(/collection \[b-logs\] is outside the key's namespaces$/));
  assert.throws(() => teamA.requireCollection('b-logs'), (error: unknown) => !String((error as Error).message).includes('team-b'));
  teamA.requireCollection('missing');
  assert.throws(() => teamA.requireUnrestricted('empty the trash'), forbidden(/reaches every namespace/));
  assert.equal(counters.snapshot().authorization_failures.namespace, 5);
});

test('records of a collection are visible only while that very collection exists in scope', () => {
  const teamA = scope(['team-a']);
  const aLogs = coordinator.getCollection('a-logs')!;
  const bLogs = coordinator.getCollection('b-logs')!;
  assert.equal(teamA.recordAccess('a-logs', aLogs.uuid), 'allowed');
  assert.equal(teamA.recordAccess('b-logs', bLogs.uuid), 'outside');
  assert.equal(teamA.recordAccess('a-logs', bLogs.uuid), 'gone', 'a re-created collection is another one');
  assert.equal(teamA.recordAccess('deleted', aLogs.uuid), 'gone', 'a deleted collection has no known namespace');
  assert.equal(scope(null).recordAccess('deleted', aLogs.uuid), 'allowed');
});

test('concrete-collection routes refuse wildcards and outside names for a limited scope', () => {
  const teamA = scope(['team-a']);
  teamA.requireConcreteCollections('a-logs,a-users,missing');
  assert.throws(() => teamA.requireConcreteCollections('a-logs,b-logs'), forbidden(/b-logs/));
  assert.throws(() => teamA.requireConcreteCollections('a-*'), forbidden(/wildcard/));
  assert.throws(() => teamA.requireConcreteCollections('_all'), forbidden(/wildcard/));
});

test('search targets are narrowed to the visible collections they match', () => {
  const teamA = scope(['team-a']);
  assert.equal(teamA.narrowTarget('*'), 'a-logs,a-users');
  assert.equal(teamA.narrowTarget('_all'), 'a-logs,a-users');
  assert.equal(teamA.narrowTarget('*-logs'), 'a-logs');
  assert.equal(teamA.narrowTarget('*,-a-users'), 'a-logs');
  assert.equal(teamA.narrowTarget('a-logs'), 'a-logs', 'concrete names pass unchanged');
  assert.equal(teamA.narrowTarget('b-*'), EMPTY_TARGET);
  assert.equal(teamA.narrowTarget('missing,a-*'), 'a-logs,a-users,missing', 'missing names stay for the 404');
  assert.throws(() => teamA.narrowTarget('b-logs,a-*'), forbidden(/b-logs/));
  const names = coordinator.listCollections().map((collection) => collection.name);
  assert.deepEqual(resolveTarget(EMPTY_TARGET, names), { names: [], missing: [] }, 'the empty target selects nothing');
  const both = scope(['team-a', 'team-b']);
  assert.equal(both.narrowTarget('*-logs'), 'a-logs,b-logs');
});
