/** Parsing of `/proc/self/mountinfo` and finding the mount that holds a path. */

/** One line of mountinfo. */
export interface MountEntry {
  /** `major:minor` of the mounted device (`0:NN` for virtual file systems such as overlay). */
  device: string;
  /** Path inside the file system that is mounted (`/` unless a bind mount). */
  root: string;
  mountPoint: string;
  /** Per-mount options, e.g. `rw`, `noatime`. */
  options: string[];
  fsType: string;
  source: string;
  /** Per-superblock options (for cgroup v1: the controllers). */
  superOptions: string[];
}

/** Undoes the kernel's octal escapes (`\040` for a space). */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_match, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** Parses mountinfo text; malformed lines are skipped. */
export function parseMountInfo(text: string): MountEntry[] {
  const mounts: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const fields = line.trim().split(' ');
    const separator = fields.indexOf('-', 6);
    if (fields.length < 10 || separator < 0) continue;
    mounts.push({
      device: fields[2],
      root: unescape(fields[3]),
      mountPoint: unescape(fields[4]),
      options: fields[5].split(','),
      fsType: fields[separator + 1],
      source: unescape(fields[separator + 2] ?? ''),
      superOptions: (fields[separator + 3] ?? '').split(','),
    });
  }
  return mounts;
}

/** The mount holding an absolute path: the longest mount point that contains it (the latest mount wins a tie). */
export function mountOf(mounts: readonly MountEntry[], path: string): MountEntry | null {
  let best: MountEntry | null = null;
  for (const mount of mounts) {
    const point = mount.mountPoint;
    const contains = point === '/' || path === point || path.startsWith(point.endsWith('/') ? point : `${point}/`);
    if (contains && (best === null || point.length >= best.mountPoint.length)) best = mount;
  }
  return best;
}
