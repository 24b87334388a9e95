/**
 * Time zones of date queries and date aggregations (`time_zone`): IANA names (`Europe/Paris`,
 * through Node's ICU, so DST rules are the system's tz database) and fixed offsets (`+01:00`,
 * `-0530`, `Z`, `UTC`). Local times are carried as epoch millis of the same wall-clock reading in
 * UTC, so the UTC calendar arithmetic of date-math.ts applies to them unchanged.
 */
import { dslError } from './dsl-reader.ts';

const OFFSET = /^([+-])(\d{1,2})(?::?(\d{2}))?$/;
const DAY_MILLIS = 86_400_000;
const QUARTER_MILLIS = 900_000;
/** Most blocks each cache keeps (a day cache of 100 000 covers 270 years). */
const MAX_CACHED_BLOCKS = 100_000;
const MAX_NAMED_ZONES = 1000;
/** Zones with rules already parsed, by name: their offset caches outlive one request. */
const NAMED_ZONES = new Map<string, TimeZone>();
const UTC_NAMES = new Set(['UTC', 'Z', 'GMT', 'Etc/UTC', 'Etc/GMT', 'UCT', 'Zulu']);

/** A time zone: a fixed offset or the rules of an IANA zone. */
export class TimeZone {
  /** UTC (the default of every date option). */
  static readonly UTC = new TimeZone('Z', 0, null);

  private constructor(
    /** The zone's ID as Elasticsearch prints it (`Z`, `+01:00`, `Europe/Paris`). */
    readonly id: string,
    /** The offset in milliseconds when it never changes; null for zones with rules. */
    private readonly fixedOffset: number | null,
    private readonly formatter: Intl.DateTimeFormat | null,
  ) {}

  /** Offsets of UTC days already read (null: the day holds a transition); zones with rules only. */
  private readonly dayOffsets = new Map<number, number | null>();
  /** Offsets of quarter hours of transition days (null: the quarter holds the transition). */
  private readonly quarterOffsets = new Map<number, number | null>();

  /** Parses a `time_zone` option; an unknown zone is a 400 naming the option's owner. */
  static parse(value: string, owner: string): TimeZone {
    const text = value.trim();
    if (UTC_NAMES.has(text) || text === '+00:00' || text === '-00:00') return TimeZone.UTC;
    // `UTC+01:00` / `GMT-5` are Java's prefixed forms of a fixed offset.
    const offset = OFFSET.exec(/^(UTC|GMT|UT)[+-]/.test(text) ? text.replace(/^(UTC|GMT|UT)/, '') : text);
    if (offset !== null) {
      const hours = Number(offset[2]);
      const minutes = offset[3] === undefined ? 0 : Number(offset[3]);
      if (hours > 18 || minutes > 59 || (hours === 18 && minutes > 0)) throw unknownZone(value, owner);
      const millis = (offset[1] === '-' ? -1 : 1) * (hours * 60 + minutes) * 60_000;
      if (millis === 0) return TimeZone.UTC;
      return new TimeZone(offsetText(millis), millis, null);
    }
    const known = NAMED_ZONES.get(text);
    if (known !== undefined) return known;
    let formatter: Intl.DateTimeFormat;
    try {
      formatter = new Intl.DateTimeFormat('en-US', {
        timeZone: text,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
        era: 'short',
      });
    } catch {
      throw unknownZone(value, owner);
    }
    const zone = new TimeZone(text, null, formatter);
    if (NAMED_ZONES.size >= MAX_NAMED_ZONES) NAMED_ZONES.clear();
    NAMED_ZONES.set(text, zone);
    return zone;
  }

  /** Whether the offset never changes (UTC or a fixed offset). */
  get fixed(): boolean {
    return this.fixedOffset !== null;
  }

  /** Whether this is UTC. */
  get isUtc(): boolean {
    return this.fixedOffset === 0;
  }

  /** Milliseconds to add to the UTC instant `millis` to read the local wall clock. */
  offsetAt(millis: number): number {
    if (this.fixedOffset !== null) return this.fixedOffset;
    // ICU is slow (about 10 µs a call): offsets are kept per UTC day, and for a day holding a
    // transition per quarter hour; a quarter holding one is read exactly.
    const day = this.blockOffset(this.dayOffsets, millis, DAY_MILLIS);
    if (day !== null) return day;
    return this.blockOffset(this.quarterOffsets, millis, QUARTER_MILLIS) ?? this.readOffset(millis);
  }

  /** The offset of the block of `size` holding `millis`, or null when it changes inside the block. */
  private blockOffset(cache: Map<number, number | null>, millis: number, size: number): number | null {
    const block = Math.floor(millis / size);
    let offset = cache.get(block);
    if (offset === undefined) {
      const start = this.readOffset(block * size);
      offset = start === this.readOffset((block + 1) * size - 1000) ? start : null;
      if (cache.size >= MAX_CACHED_BLOCKS) cache.clear();
      cache.set(block, offset);
    }
    return offset;
  }

  private readOffset(millis: number): number {
    // Offsets are whole seconds: read the wall clock at the second, the millis carry over unchanged.
    const second = Math.floor(millis / 1000) * 1000;
    const parts = this.formatter!.formatToParts(second);
    const field = (type: string): number => Number(parts.find((part) => part.type === type)?.value ?? 0);
    const year = parts.find((part) => part.type === 'era')?.value === 'BC' ? 1 - field('year') : field('year');
    const local = new Date(0);
    local.setUTCFullYear(year, field('month') - 1, field('day'));
    local.setUTCHours(field('hour'), field('minute'), field('second'), 0);
    return local.getTime() - second;
  }

  /** The local reading (as UTC millis) of the instant `millis`. */
  toLocal(millis: number): number {
    return millis + this.offsetAt(millis);
  }

  /**
   * The instant whose local reading is `local`. A reading that happens twice (clocks set back)
   * is its earlier instant; one skipped by a DST gap moves forward by the gap, like java.time.
   */
  toUtc(local: number): number {
    if (this.fixedOffset !== null) return local - this.fixedOffset;
    // The offsets a day either side bound every transition near `local`; try both.
    const before = this.offsetAt(local - 86_400_000);
    const after = this.offsetAt(local + 86_400_000);
    if (before === after) return local - before;
    const candidates = [local - before, local - after].filter((instant) => this.toLocal(instant) === local).sort((a, b) => a - b);
    if (candidates.length > 0) return candidates[0]!;
    // In a gap: the reading is `before` in the old offset, which lands past the transition.
    return local - before;
  }

  /** The offset at `millis` as `+01:00`, or `Z` for zero (ISO 8601, as Elasticsearch prints it). */
  offsetTextAt(millis: number): string {
    return offsetText(this.offsetAt(millis));
  }
}

function offsetText(millis: number): string {
  if (millis === 0) return 'Z';
  const sign = millis < 0 ? '-' : '+';
  const minutes = Math.round(Math.abs(millis) / 60_000);
  return `${sign}${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
}

function unknownZone(value: string, owner: string): Error {
  return dslError(`[${owner}] unknown time zone [${value}]: use an IANA name such as [Europe/Paris] or an offset such as [+01:00]`);
}

/** Parses an optional `time_zone` option (UTC when absent). */
export function readTimeZone(value: unknown, owner: string): TimeZone {
  if (value === undefined || value === null) return TimeZone.UTC;
  if (typeof value !== 'string') throw dslError(`[${owner}] [time_zone] must be a string`);
  return TimeZone.parse(value, owner);
}
