/**
 * On-disk form of the embedded catalog: `<path.data>/catalog/catalog.json`, one JSON document
 * `{"format": "trove-catalog", "version": 1, "catalog": {...Catalog}}` replaced atomically on
 * every change (see atomic-file.ts). A file that cannot be parsed stops the node: silently
 * starting with an empty catalog would orphan every shard on disk.
 */
import { readFile } from 'node:fs/promises';
import type { Catalog } from '../catalog.ts';
import { CatalogError } from '../catalog-error.ts';
import { writeFileAtomic, type AtomicWriteOptions } from '../../engine/directory/atomic-file.ts';

/** Value of the file's `format` field. */
export const CATALOG_FORMAT = 'trove-catalog';
/** Current version of the file layout; readers refuse newer versions. */
export const CATALOG_FORMAT_VERSION = 1;

interface CatalogFile {
  format: string;
  version: number;
  catalog: Catalog;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function checkCatalog(value: unknown, path: string): Catalog {
  const corrupt = (what: string): CatalogError =>
    new CatalogError('catalog_unavailable', `catalog file ${path} is damaged: ${what}`);
  if (!isRecord(value)) throw corrupt('the document is not an object');
  if (value.format !== CATALOG_FORMAT) throw corrupt(`unexpected format ${JSON.stringify(value.format)}`);
  if (typeof value.version !== 'number' || value.version > CATALOG_FORMAT_VERSION) {
    throw corrupt(`unsupported format version ${JSON.stringify(value.version)} (this build reads ${CATALOG_FORMAT_VERSION})`);
  }
  const catalog = value.catalog;
  if (!isRecord(catalog)) throw corrupt('no catalog object');
  if (typeof catalog.revision !== 'number' || typeof catalog.clusterName !== 'string') {
    throw corrupt('missing revision or cluster name');
  }
  for (const section of ['namespaces', 'collections', 'nodes']) {
    if (!isRecord(catalog[section])) throw corrupt(`section ${section} is not an object`);
  }
  // Catalogs written before API keys existed have no `apiKeys` section: they hold no key.
  if (catalog.apiKeys !== undefined && !isRecord(catalog.apiKeys)) throw corrupt('section apiKeys is not an object');
  return (value as unknown as CatalogFile).catalog;
}

/** Reads the catalog file; null when it does not exist yet. */
export async function readCatalogFile(path: string): Promise<Catalog | null> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CatalogError('catalog_unavailable', `cannot read catalog file ${path}: ${(error as Error).message}`);
  }
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new CatalogError('catalog_unavailable', `catalog file ${path} is damaged: ${(error as Error).message}`);
  }
  return checkCatalog(document, path);
}

/** Atomically replaces the catalog file with `catalog`. */
export async function writeCatalogFile(path: string, catalog: Catalog, options: AtomicWriteOptions = {}): Promise<void> {
  const document: CatalogFile = { format: CATALOG_FORMAT, version: CATALOG_FORMAT_VERSION, catalog };
  await writeFileAtomic(path, `${JSON.stringify(document, null, 1)}\n`, options);
}
