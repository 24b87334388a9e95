/**
 * Limits every mapping obeys (Elasticsearch `index.mapping.total_fields.limit` and
 * `index.mapping.depth.limit`) and the field names a document may not use: metadata fields at the
 * root, and the reserved names (`__proto__`, `constructor`, `prototype`) as any path segment, which
 * as object keys reach or shadow `Object.prototype`.
 */
import { EngineError } from '../errors.ts';
import type { FieldMapping, Mapping } from './mapping.ts';

/** Most fields a mapping may hold, counting objects, leaves and multi-fields. */
export const TOTAL_FIELDS_LIMIT = 1000;

/** Deepest field allowed; a root-level field has depth 1, `a.b.c` has depth 3. */
export const DEPTH_LIMIT = 20;

/** Elasticsearch metadata fields: reserved at the root of a document and of a mapping. */
export const METADATA_FIELDS: ReadonlySet<string> = new Set([
  '_id',
  '_index',
  '_source',
  '_routing',
  '_version',
  '_seq_no',
  '_primary_term',
  '_ignored',
  '_field_names',
  '_doc',
]);

/** Names that may not be a field name or a segment of a dotted path anywhere. */
export const RESERVED_FIELD_NAMES: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** The first segment of a dotted path that is a reserved name, or undefined. */
export function reservedSegment(path: string): string | undefined {
  return path.split('.').find((segment) => RESERVED_FIELD_NAMES.has(segment));
}

/** Throws mapper_parsing when a segment of the (dotted) field `name` is a reserved name; `shown` is its full path. */
export function assertNotReserved(name: string, shown: string = name): void {
  const segment = reservedSegment(name);
  if (segment !== undefined) {
    throw new EngineError('mapper_parsing', `field name [${shown}] is not allowed: [${segment}] is a reserved name`);
  }
}

/** Throws mapper_parsing when a root-level document key is a metadata field. */
export function assertNotMetadataField(name: string): void {
  if (METADATA_FIELDS.has(name)) {
    throw new EngineError(
      'mapper_parsing',
      `Field [${name}] is a metadata field and cannot be added inside a document. Use the index API request parameters.`,
    );
  }
}

/** Throws mapper_parsing when a field at `depth` (1 = root level) is deeper than allowed. */
export function assertDepth(path: string, depth: number): void {
  if (depth > DEPTH_LIMIT) {
    throw new EngineError(
      'mapper_parsing',
      `Limit of mapping depth [${DEPTH_LIMIT}] has been exceeded due to object field [${path}]`,
    );
  }
}

/**
 * Throws when a field name (one segment, or a dotted name that expands into objects) is empty,
 * blank, starts or ends with a dot (which makes object resolution ambiguous), or has a reserved
 * segment.
 */
export function assertValidFieldName(name: string, parentPath: string): void {
  const shown = parentPath === '' ? name : `${parentPath}.${name}`;
  if (name.length === 0) {
    throw new EngineError('mapper_parsing', `field name cannot be an empty string (in [${parentPath || '_doc'}])`);
  }
  if (name.trim().length === 0) {
    throw new EngineError('mapper_parsing', `field name cannot contain only whitespace: [${shown}]`);
  }
  if (name.startsWith('.') || name.endsWith('.') || name.includes('..')) {
    throw new EngineError(
      'mapper_parsing',
      `field name [${shown}] must not start or end with a dot or contain an empty segment`,
    );
  }
  assertNotReserved(name, shown);
}

/** Number of fields of a mapping as the total-fields limit counts them. */
export function countFields(properties: Record<string, FieldMapping>): number {
  let count = 0;
  for (const field of Object.values(properties)) {
    count += 1;
    if (field.properties !== undefined) count += countFields(field.properties);
    if (field.fields !== undefined) count += Object.keys(field.fields).length;
  }
  return count;
}

/** Throws when a mapping exceeds the total-fields or the depth limit. */
export function checkMappingLimits(mapping: Mapping): void {
  const total = countFields(mapping.properties);
  if (total > TOTAL_FIELDS_LIMIT) {
    throw new EngineError('illegal_argument', `Limit of total fields [${TOTAL_FIELDS_LIMIT}] has been exceeded`);
  }
  checkDepth(mapping.properties, '', 1);
}

function checkDepth(properties: Record<string, FieldMapping>, prefix: string, depth: number): void {
  for (const [name, field] of Object.entries(properties)) {
    const path = prefix === '' ? name : `${prefix}.${name}`;
    assertDepth(path, depth);
    if (field.properties !== undefined) checkDepth(field.properties, path, depth + 1);
  }
}
