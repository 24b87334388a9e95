/**
 * Checks of the `alias` fields of a whole mapping, in OpenSearch's words: an alias's `path` must
 * name a concrete field of the mapping (a leaf or a multi-field, not an object), not the alias
 * itself and not another alias.
 */
import { EngineError } from '../errors.ts';
import type { FieldMapping, Mapping } from './mapping.ts';

/** Throws mapper_parsing for the first alias of `mapping` whose `path` is not a concrete field. */
export function checkFieldAliases(mapping: Mapping): void {
  const kinds = new Map<string, 'leaf' | 'object' | 'alias'>();
  const aliases: [string, string][] = [];
  const walk = (properties: Record<string, FieldMapping>, prefix: string): void => {
    for (const [name, field] of Object.entries(properties)) {
      const path = prefix === '' ? name : `${prefix}.${name}`;
      if (field.type === 'object' || field.type === 'nested') {
        kinds.set(path, 'object');
        walk(field.properties ?? {}, path);
      } else if (field.type === 'alias') {
        kinds.set(path, 'alias');
        aliases.push([path, field.path ?? '']);
      } else {
        kinds.set(path, 'leaf');
        for (const sub of Object.keys(field.fields ?? {})) kinds.set(`${path}.${sub}`, 'leaf');
      }
    }
  };
  walk(mapping.properties, '');
  for (const [alias, target] of aliases) {
    const invalid = (reason: string): EngineError =>
      new EngineError('mapper_parsing', `Invalid [path] value [${target}] for field alias [${alias}]: ${reason}`);
    if (target === alias) throw invalid('an alias cannot refer to itself.');
    const kind = kinds.get(target);
    if (kind === 'alias') throw invalid('an alias cannot refer to another alias.');
    if (kind !== 'leaf') throw invalid('an alias must refer to an existing field in the mappings.');
  }
}
