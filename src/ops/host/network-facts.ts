/**
 * Network interfaces from `/sys/class/net`: negotiated link speed (Mb/s; virtual and down
 * interfaces have none, which is a fact with its reason, not a failure), state, MTU, MAC address,
 * driver, and whether the interface is virtual (bridges, veth pairs, loopback).
 */
import { basename } from 'node:path';
import { fact, type Fact } from './fact.ts';
import type { HostFiles } from './host-files.ts';

/** One network interface. */
export interface NetworkInterface {
  name: string;
  /** Negotiated speed in Mb/s. */
  speed_mbps: Fact<number>;
  operstate: string | null;
  mtu: number | null;
  mac: string | null;
  driver: string | null;
  virtual: boolean;
}

async function readSpeed(files: HostFiles, name: string): Promise<number> {
  const speed = await files.integer(`/sys/class/net/${name}/speed`);
  // The kernel reports -1 (or 2^32-1 on old kernels) when no link speed was negotiated.
  if (speed < 0 || speed === 4294967295) throw new Error(`no negotiated link speed on ${name} (link down or not reported by the driver)`);
  return speed;
}

async function readInterface(files: HostFiles, name: string): Promise<NetworkInterface> {
  const dir = `/sys/class/net/${name}`;
  const [speed, operstate, mtu, mac, driver, link] = await Promise.all([
    fact(() => readSpeed(files, name)),
    files.line(`${dir}/operstate`).catch(() => null),
    files.integer(`${dir}/mtu`).catch(() => null),
    files.line(`${dir}/address`).catch(() => null),
    files.link(`${dir}/device/driver`).then(basename, () => null),
    files.link(dir).catch(() => null),
  ]);
  return { name, speed_mbps: speed, operstate, mtu, mac, driver, virtual: name === 'lo' || (link?.includes('/virtual/') ?? false) };
}

/** Reads the NIC inventory. */
export async function readNetworkFacts(files: HostFiles): Promise<Fact<NetworkInterface[]>> {
  return fact(async () => Promise.all((await files.list('/sys/class/net')).map((name) => readInterface(files, name))));
}
