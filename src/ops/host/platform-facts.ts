/**
 * The platform: DMI identification of the machine (`/sys/class/dmi/id`: vendor, product, BIOS,
 * board, chassis) and the hypervisor, if any (`/sys/hypervisor/type`, or the `hypervisor` CPU
 * flag that every x86 guest sees).
 */
import { fact, type Fact } from './fact.ts';
import type { HostFiles } from './host-files.ts';

/** DMI fields that could be read (others are absent: many are root-only or blank on VMs). */
export type DmiPlatform = Partial<Record<(typeof DMI_FIELDS)[number], string>>;

/** Hypervisor detection. */
export interface Hypervisor {
  detected: boolean;
  /** e.g. `xen`, `kvm`, when the kernel names it. */
  type: string | null;
}

/** Platform facts of node info. */
export interface PlatformFacts {
  dmi: Fact<DmiPlatform>;
  hypervisor: Fact<Hypervisor>;
}

const DMI_FIELDS = [
  'sys_vendor',
  'product_name',
  'product_version',
  'product_family',
  'board_vendor',
  'board_name',
  'bios_vendor',
  'bios_version',
  'bios_date',
  'chassis_type',
] as const;

async function readDmi(files: HostFiles): Promise<DmiPlatform> {
  await files.list('/sys/class/dmi/id');
  const platform: DmiPlatform = {};
  await Promise.all(
    DMI_FIELDS.map(async (field) => {
      const value = await files.line(`/sys/class/dmi/id/${field}`).catch(() => '');
      if (value !== '') platform[field] = value;
    }),
  );
  return platform;
}

async function readHypervisor(files: HostFiles): Promise<Hypervisor> {
  const type = await files.line('/sys/hypervisor/type').catch(() => null);
  if (type) return { detected: true, type };
  const cpuinfo = await files.text('/proc/cpuinfo');
  const flags = cpuinfo.split('\n').find((line) => /^(flags|Features)\s*:/.test(line));
  if (flags === undefined) throw new Error('/proc/cpuinfo lists no CPU flags on this architecture');
  return { detected: /\shypervisor(\s|$)/.test(flags), type: null };
}

/** Reads the platform facts. */
export async function readPlatformFacts(files: HostFiles): Promise<PlatformFacts> {
  const [dmi, hypervisor] = await Promise.all([fact(() => readDmi(files)), fact(() => readHypervisor(files))]);
  return { dmi, hypervisor };
}
