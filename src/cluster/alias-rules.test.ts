import { test } from 'node:test';
import assert from 'node:assert/strict';
import { emptyCatalog, type Catalog } from './catalog.ts';
import { CatalogError } from './catalog-error.ts';
import { buildAliasIndex, writeMember } from './aliases.ts';
import { fitRestoredAliases, updateAliasesIn, type AliasAction } from './alias-rules.ts';
import { createCollectionIn, createNamespaceIn, restoreCollectionsIn } from './catalog-rules.ts';

/** A catalog with collections `a`, `b` (default namespace) and `other` (namespace `team`). */
function draft(): Catalog {
  const catalog = structuredClone(emptyCatalog('test', 'uuid', 0)) as Catalog;
  catalog.nodes.n1 = { id: 'n1', name: 'n1', address: 'http://x', version: '0', roles: ['data'], startedAt: 0 };
  createNamespaceIn(catalog, 'team', 0);
  for (const [name, namespace] of [['a', 'default'], ['b', 'default'], ['other', 'team']]) {
    createCollectionIn(catalog, { name: name!, namespace, settings: { number_of_shards: 1, number_of_replicas: 0 }, mapping: { properties: {} } }, 0);
  }
  return catalog;
}

function refusal(run: () => unknown, code: string, reason: RegExp): void {
  assert.throws(run, (error: unknown) => error instanceof CatalogError && error.code === code && reason.test(error.message));
}

test('add and remove apply in order; patterns select collections; versions of changed collections move', () => {
  const catalog = draft();
  const actions: AliasAction[] = [
    { kind: 'add', indices: ['a', 'b'], aliases: ['both'], alias: {} },
    { kind: 'add', indices: ['b'], aliases: ['both'], alias: { is_write_index: true, filter: { term: { x: 1 } } } },
    { kind: 'add', indices: ['*'], aliases: ['tmp'], alias: {} },
    { kind: 'remove', indices: ['*'], aliases: ['t*'] },
  ];
  assert.deepEqual(updateAliasesIn(catalog, actions), []);
  assert.deepEqual(catalog.collections.a!.aliases, { both: {} });
  assert.deepEqual(catalog.collections.b!.aliases, { both: { is_write_index: true, filter: { term: { x: 1 } } } });
  assert.equal(catalog.collections.other!.aliases, undefined);
  assert.equal(catalog.collections.a!.version, 2);
  assert.equal(catalog.collections.other!.version, 1);
  const index = buildAliasIndex(Object.values(catalog.collections));
  assert.deepEqual(index.get('both')!.map((member) => member.collection), ['a', 'b']);
  assert.equal(writeMember('both', index.get('both')!).collection, 'b');
});

test('a batch is checked as a whole: names shared with collections, one namespace, one write index, missing aliases', () => {
  refusal(() => updateAliasesIn(draft(), [{ kind: 'add', indices: ['a'], aliases: ['b'], alias: {} }]), 'invalid_alias_name', /an index or data stream exists with the same name/);
  refusal(() => updateAliasesIn(draft(), [{ kind: 'add', indices: ['a'], aliases: ['Bad'], alias: {} }]), 'invalid_alias_name', /lowercase/);
  refusal(() => updateAliasesIn(draft(), [{ kind: 'add', indices: ['a', 'other'], aliases: ['x'], alias: {} }]), 'illegal_argument', /several namespaces; an alias belongs to the one namespace/);
  refusal(() => updateAliasesIn(draft(), [{ kind: 'add', indices: ['a', 'b'], aliases: ['x'], alias: { is_write_index: true } }]), 'illegal_argument', /more than one write index \[a,b\]/);
  refusal(() => updateAliasesIn(draft(), [{ kind: 'remove', indices: ['a'], aliases: ['x'] }]), 'alias_not_found', /aliases \[x\] missing/);
  refusal(() => updateAliasesIn(draft(), [{ kind: 'add', indices: ['nope'], aliases: ['x'], alias: {} }]), 'index_not_found', /nope/);
  assert.deepEqual(updateAliasesIn(draft(), [{ kind: 'remove', indices: ['a'], aliases: ['x'], mustExist: false }]), []);
});

test('remove_index takes a collection out in the same change, so an alias may take its name', () => {
  const catalog = draft();
  const removed = updateAliasesIn(catalog, [
    { kind: 'remove_index', indices: ['a'] },
    { kind: 'add', indices: ['b'], aliases: ['a'], alias: {} },
  ]);
  assert.deepEqual(removed.map((collection) => collection.name), ['a']);
  assert.equal(Object.hasOwn(catalog.collections, 'a'), false);
  assert.deepEqual(catalog.collections.b!.aliases, { a: {} });
});

test('collections cannot take an alias name; a write through an alias of several without a write index is refused', () => {
  const catalog = draft();
  updateAliasesIn(catalog, [{ kind: 'add', indices: ['a', 'b'], aliases: ['both'], alias: {} }]);
  refusal(
    () => createCollectionIn(catalog, { name: 'both', settings: { number_of_shards: 1, number_of_replicas: 0 }, mapping: { properties: {} } }, 0),
    'invalid_index_name',
    /already exists as alias/,
  );
  refusal(() => writeMember('both', buildAliasIndex(Object.values(catalog.collections)).get('both')!), 'illegal_argument', /no write index is defined for alias \[both\]/);
  refusal(() => writeMember('one', [{ collection: 'a', namespace: 'default', alias: { is_write_index: false } }]), 'illegal_argument', /no write index/);
});

test('a restored collection keeps the aliases that still fit', () => {
  const catalog = draft();
  updateAliasesIn(catalog, [
    { kind: 'add', indices: ['a'], aliases: ['kept', 'taken', 'writer'], alias: {} },
    { kind: 'add', indices: ['a'], aliases: ['writer'], alias: { is_write_index: true } },
  ]);
  const gone = structuredClone(catalog.collections.a!);
  delete catalog.collections.a;
  createCollectionIn(catalog, { name: 'taken', settings: { number_of_shards: 1, number_of_replicas: 0 }, mapping: { properties: {} } }, 0);
  updateAliasesIn(catalog, [{ kind: 'add', indices: ['b'], aliases: ['writer'], alias: { is_write_index: true } }]);
  const [restored] = restoreCollectionsIn(catalog, { collections: [gone] });
  assert.deepEqual(restored!.aliases, { kept: {}, writer: { is_write_index: false } });

  const renamed = { ...structuredClone(gone), name: 'kept', uuid: 'other-uuid', shards: [{ id: 0, uuid: 'other-shard' }] };
  delete catalog.collections.a;
  const [asAlias] = restoreCollectionsIn(catalog, { collections: [renamed] });
  assert.deepEqual(Object.keys(asAlias!.aliases ?? {}), ['writer'], 'a collection renamed like its own alias drops that alias');

  const lone = structuredClone(restored!);
  delete lone.aliases;
  fitRestoredAliases(catalog, lone);
  assert.equal(lone.aliases, undefined);
});
