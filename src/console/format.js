/** Numbers, sizes, times and durations as the console shows them. */

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** A byte count in the largest unit that keeps it at or above 1 (`1.5 MiB`). */
export function formatBytes(bytes) {
  if (bytes === null || bytes === undefined || Number.isNaN(Number(bytes))) return '–';
  let value = Number(bytes);
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${BYTE_UNITS[unit]}`;
}

/** A count with thousands separators. */
export function formatCount(value) {
  if (value === null || value === undefined) return '–';
  return Number(value).toLocaleString('en');
}

/** A duration in ms as `3d 4h`, `12m 5s`, `850 ms`. */
export function formatDuration(milliseconds) {
  if (milliseconds === null || milliseconds === undefined) return '–';
  const ms = Math.max(0, Math.round(milliseconds));
  if (ms < 1000) return `${ms} ms`;
  const seconds = Math.floor(ms / 1000);
  const parts = [
    [Math.floor(seconds / 86400), 'd'],
    [Math.floor((seconds % 86400) / 3600), 'h'],
    [Math.floor((seconds % 3600) / 60), 'm'],
    [seconds % 60, 's'],
  ].filter(([amount]) => amount > 0);
  return parts.slice(0, 2).map(([amount, unit]) => `${amount}${unit}`).join(' ');
}

/** An ISO time or epoch ms as local date and time. */
export function formatTime(time) {
  if (time === null || time === undefined) return '–';
  const date = new Date(time);
  return Number.isNaN(date.getTime()) ? String(time) : date.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' });
}

/** A number with at most `digits` decimals. */
export function formatDecimal(value, digits = 2) {
  if (value === null || value === undefined) return '–';
  return Number(value).toLocaleString('en', { maximumFractionDigits: digits });
}
