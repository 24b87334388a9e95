/**
 * Network ceilings: the connection-tracking table's fill (a full table drops new connections
 * silently) and the TCP sysctls that bound a server's connections (`somaxconn` caps the listen
 * backlog; port range, TIME_WAIT reuse, keepalive and buffer sizes).
 */
import { fact, type Fact } from './fact.ts';
import type { HostFiles } from './host-files.ts';

/** Connection-tracking table use. */
export interface Conntrack {
  count: number;
  max: number;
  fill_percent: number;
}

/** TCP and socket sysctls, each its own fact (name → file under /proc/sys). */
export const TCP_SYSCTLS = {
  'net.core.somaxconn': '/proc/sys/net/core/somaxconn',
  'net.ipv4.tcp_max_syn_backlog': '/proc/sys/net/ipv4/tcp_max_syn_backlog',
  'net.ipv4.ip_local_port_range': '/proc/sys/net/ipv4/ip_local_port_range',
  'net.ipv4.tcp_tw_reuse': '/proc/sys/net/ipv4/tcp_tw_reuse',
  'net.ipv4.tcp_fin_timeout': '/proc/sys/net/ipv4/tcp_fin_timeout',
  'net.ipv4.tcp_keepalive_time': '/proc/sys/net/ipv4/tcp_keepalive_time',
  'net.ipv4.tcp_rmem': '/proc/sys/net/ipv4/tcp_rmem',
  'net.ipv4.tcp_wmem': '/proc/sys/net/ipv4/tcp_wmem',
  'net.core.rmem_max': '/proc/sys/net/core/rmem_max',
  'net.core.wmem_max': '/proc/sys/net/core/wmem_max',
} as const;

/** Network sysctl facts of node info. */
export interface NetworkSysctlFacts {
  conntrack: Fact<Conntrack>;
  /** Values as the kernel prints them: a number, or the whitespace-separated list as a string. */
  tcp: Record<keyof typeof TCP_SYSCTLS, Fact<number | string>>;
}

async function readSysctl(files: HostFiles, path: string): Promise<number | string> {
  const text = (await files.line(path)).replace(/\s+/g, ' ');
  return /^-?\d+$/.test(text) ? Number(text) : text;
}

/** Reads the network sysctl facts. */
export async function readNetworkSysctlFacts(files: HostFiles): Promise<NetworkSysctlFacts> {
  const conntrack = fact(async (): Promise<Conntrack> => {
    const read = (name: string): Promise<number> =>
      files.integer(`/proc/sys/net/netfilter/${name}`).catch((error: Error) => {
        throw new Error(`${error.message} (the nf_conntrack module is not loaded, or connection tracking is hidden from this namespace)`);
      });
    const [count, max] = await Promise.all([read('nf_conntrack_count'), read('nf_conntrack_max')]);
    return { count, max, fill_percent: max > 0 ? Math.round((count / max) * 10_000) / 100 : 0 };
  });
  const names = Object.keys(TCP_SYSCTLS) as Array<keyof typeof TCP_SYSCTLS>;
  const values = await Promise.all(names.map((name) => fact(() => readSysctl(files, TCP_SYSCTLS[name]))));
  const tcp = Object.fromEntries(names.map((name, index) => [name, values[index]])) as NetworkSysctlFacts['tcp'];
  return { conntrack: await conntrack, tcp };
}
