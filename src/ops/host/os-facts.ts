/** Operating system facts: the distribution (`/etc/os-release`) and the running kernel. */
import { fact, type Fact } from './fact.ts';
import type { HostFiles } from './host-files.ts';

/** The distribution as `/etc/os-release` names it. */
export interface Distribution {
  id: string | null;
  name: string | null;
  version_id: string | null;
  pretty_name: string | null;
}

/** The running kernel. */
export interface Kernel {
  /** e.g. `Linux`. */
  type: string;
  /** e.g. `6.1.0-18-amd64`. */
  release: string;
  /** Build string, e.g. `#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01)`. */
  version: string | null;
  /** CPU architecture of this process. */
  arch: string;
}

/** OS facts of node info. */
export interface OsFacts {
  distribution: Fact<Distribution>;
  kernel: Fact<Kernel>;
}

/** Parses `/etc/os-release` (shell-style `KEY="value"` lines). */
export function parseOsRelease(text: string): Distribution {
  const fields = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (match) fields.set(match[1], match[2].replace(/^"(.*)"$/, '$1').replace(/^'(.*)'$/, '$1'));
  }
  if (fields.size === 0) throw new Error('/etc/os-release has no KEY=value lines');
  return {
    id: fields.get('ID') ?? null,
    name: fields.get('NAME') ?? null,
    version_id: fields.get('VERSION_ID') ?? null,
    pretty_name: fields.get('PRETTY_NAME') ?? null,
  };
}

async function readDistribution(files: HostFiles): Promise<Distribution> {
  // /etc/os-release is the standard location; /usr/lib/os-release is its documented fallback.
  const text = await files.text('/etc/os-release').catch(() => files.text('/usr/lib/os-release'));
  return parseOsRelease(text);
}

/** Reads the OS facts. */
export async function readOsFacts(files: HostFiles): Promise<OsFacts> {
  const [distribution, kernel] = await Promise.all([
    fact(() => readDistribution(files)),
    fact(async (): Promise<Kernel> => ({
      type: await files.line('/proc/sys/kernel/ostype').catch(() => 'Linux'),
      release: await files.line('/proc/sys/kernel/osrelease'),
      version: await files.line('/proc/sys/kernel/version').catch(() => null),
      arch: process.arch,
    })),
  ]);
  return { distribution, kernel };
}
