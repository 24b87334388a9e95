/**
 * The disk under the data path: the mount that holds it (file system, options, atime policy) and
 * the block device behind that mount (NVMe or not, bus, rotational, I/O scheduler). Found through
 * `/proc/self/mountinfo` (device number of the mount) and `/sys/dev/block/<major:minor>`, whose
 * link target shows the bus; a partition is resolved to its disk. Virtual file systems (overlay,
 * tmpfs) have no block device, which is reported as the fact's reason.
 */
import { basename, dirname } from 'node:path';
import { fact, type Fact } from './fact.ts';
import type { HostFiles } from './host-files.ts';
import { mountOf, parseMountInfo } from './mountinfo.ts';

/** How reads update access times on a mount. */
export type AtimePolicy = 'noatime' | 'relatime' | 'strictatime';

/** The mount holding the data path. */
export interface DataMount {
  mount_point: string;
  fs_type: string;
  source: string;
  options: string[];
  atime: AtimePolicy;
}

/** The block device behind the data path's mount. */
export interface DataDevice {
  /** Kernel name of the disk, e.g. `nvme0n1`, `sda`, `vda`, `dm-0`. */
  name: string;
  bus: 'nvme' | 'virtio' | 'ata' | 'scsi' | 'usb' | 'mmc' | 'device-mapper' | 'md' | 'unknown';
  nvme: boolean;
  rotational: boolean | null;
  /** The active I/O scheduler (`none`, `mq-deadline`, ...). */
  scheduler: string | null;
  /** Schedulers the device offers. */
  schedulers: string[];
  /** Disks under a device-mapper or md device. */
  underlying: string[];
}

/** Data disk facts of node info. */
export interface DataDiskFacts {
  mount: Fact<DataMount>;
  device: Fact<DataDevice>;
}

/** The atime policy a mount's options select (the kernel default, without an option, is strict). */
export function atimePolicy(options: readonly string[]): AtimePolicy {
  if (options.includes('noatime')) return 'noatime';
  if (options.includes('relatime')) return 'relatime';
  return 'strictatime';
}

function busOf(devicePath: string, name: string): DataDevice['bus'] {
  if (devicePath.includes('/nvme') || name.startsWith('nvme')) return 'nvme';
  if (name.startsWith('dm-')) return 'device-mapper';
  if (name.startsWith('md')) return 'md';
  if (devicePath.includes('/virtio')) return 'virtio';
  if (devicePath.includes('/usb')) return 'usb';
  if (devicePath.includes('/mmc')) return 'mmc';
  if (devicePath.includes('/ata')) return 'ata';
  if (/\/host\d+\/target/.test(devicePath)) return 'scsi';
  return 'unknown';
}

/** Parses a `queue/scheduler` line such as `none [mq-deadline] kyber`. */
export function parseScheduler(line: string): { active: string | null; available: string[] } {
  const available = line.split(/\s+/).filter((part) => part !== '').map((part) => part.replace(/^\[(.*)\]$/, '$1'));
  const active = /\[([^\]]+)\]/.exec(line)?.[1] ?? (available.length === 1 ? available[0] : null);
  return { active, available };
}

async function readDevice(files: HostFiles, deviceNumber: string, mountDescription: string): Promise<DataDevice> {
  if (deviceNumber.startsWith('0:')) throw new Error(`the data path is on ${mountDescription}, which has no block device`);
  let devicePath = await files.link(`/sys/dev/block/${deviceNumber}`);
  if (await files.exists(`${devicePath}/partition`)) devicePath = dirname(devicePath);
  const name = basename(devicePath);
  const [rotational, scheduler, underlying] = await Promise.all([
    files.integer(`${devicePath}/queue/rotational`).then((value) => value === 1, () => null),
    files.line(`${devicePath}/queue/scheduler`).then(parseScheduler, () => ({ active: null, available: [] })),
    files.list(`${devicePath}/slaves`).catch(() => [] as string[]),
  ]);
  const bus = busOf(devicePath, name);
  return { name, bus, nvme: bus === 'nvme', rotational, scheduler: scheduler.active, schedulers: scheduler.available, underlying };
}

/** Reads the data-disk facts for the (canonical, absolute) data path. */
export async function readDataDiskFacts(files: HostFiles, dataPath: string): Promise<DataDiskFacts> {
  const mountEntry = fact(async () => {
    const entry = mountOf(parseMountInfo(await files.text('/proc/self/mountinfo')), dataPath);
    if (entry === null) throw new Error('no mount in /proc/self/mountinfo holds the data path');
    return entry;
  });
  const entry = await mountEntry;
  if (entry.value === null) return { mount: entry, device: entry };
  const { mountPoint, fsType, source, options, device } = entry.value;
  const mount: DataMount = { mount_point: mountPoint, fs_type: fsType, source, options, atime: atimePolicy(options) };
  return { mount: { value: mount }, device: await fact(() => readDevice(files, device, `${fsType} (${source})`)) };
}
