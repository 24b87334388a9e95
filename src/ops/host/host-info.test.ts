import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CgroupThrottleProbe } from './cgroup-facts.ts';
import { HostFiles } from './host-files.ts';
import { readHostInfo } from './host-info.ts';

let fakeRoot: string;
let emptyRoot: string;

const DATA_PATH = '/srv/trove/data';

/** A fake host tree: an NVMe data disk, two NUMA nodes, cgroup v2, and every warning's trigger. */
const FILES: Record<string, string> = {
  '/etc/os-release': 'NAME="Example Linux"\nID=example\nVERSION_ID="9.1"\nPRETTY_NAME="Example Linux 9.1"\n',
  '/proc/sys/kernel/ostype': 'Linux\n',
  '/proc/sys/kernel/osrelease': '6.6.1-example\n',
  '/proc/sys/kernel/version': '#1 SMP\n',
  '/sys/devices/system/node/node0/cpulist': '0-3,8\n',
  '/sys/devices/system/node/node0/distance': '10 21\n',
  '/sys/devices/system/node/node1/cpulist': '4-7\n',
  '/sys/devices/system/node/node1/distance': '21 10\n',
  '/proc/sys/vm/zone_reclaim_mode': '1\n',
  '/sys/devices/pci0000:00/0000:00:03.0/net/eth0/speed': '25000\n',
  '/sys/devices/pci0000:00/0000:00:03.0/net/eth0/operstate': 'up\n',
  '/sys/devices/pci0000:00/0000:00:03.0/net/eth0/mtu': '9000\n',
  '/sys/devices/pci0000:00/0000:00:03.0/net/eth0/address': '0a:00:00:00:00:01\n',
  '/sys/bus/pci/drivers/ice/bind': '',
  '/sys/devices/virtual/net/veth1/speed': '-1\n',
  '/sys/devices/virtual/net/veth1/operstate': 'up\n',
  '/proc/self/mountinfo': [
    '1 0 0:31 / / rw,relatime - overlay overlay rw',
    '2 1 259:1 / /srv/trove rw - ext4 /dev/nvme0n1p1 rw',
    '3 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw',
    '',
  ].join('\n'),
  '/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/nvme0n1p1/partition': '1\n',
  '/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/queue/rotational': '1\n',
  '/sys/devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/queue/scheduler': '[none] mq-deadline\n',
  '/.dockerenv': '',
  '/proc/self/cgroup': '0::/kubepods/pod1\n',
  '/proc/self/status': 'Name:\ttrove\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t3\n',
  '/sys/class/dmi/id/sys_vendor': 'Example Corp\n',
  '/sys/class/dmi/id/product_name': 'X1 Server\n',
  '/sys/hypervisor/type': 'xen\n',
  '/sys/kernel/mm/transparent_hugepage/enabled': '[always] madvise never\n',
  '/sys/kernel/mm/transparent_hugepage/defrag': 'always [madvise] never\n',
  '/proc/meminfo': 'MemTotal:       1000 kB\nMemAvailable:    500 kB\nSwapTotal:       200 kB\nSwapFree:        100 kB\n',
  '/proc/sys/vm/swappiness': '60\n',
  '/proc/sys/vm/overcommit_memory': '2\n',
  '/proc/self/limits': 'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 4096                 files\n',
  '/proc/self/fd/0': '',
  '/proc/self/fd/1': '',
  '/proc/self/maps': 'a\nb\nc\n',
  '/proc/sys/vm/max_map_count': '65530\n',
  '/proc/sys/net/netfilter/nf_conntrack_count': '90\n',
  '/proc/sys/net/netfilter/nf_conntrack_max': '100\n',
  '/proc/sys/net/core/somaxconn': '128\n',
  '/proc/sys/net/ipv4/ip_local_port_range': '32768\t60999\n',
  '/sys/fs/cgroup/kubepods/pod1/cpu.max': '50000 100000\n',
  '/sys/fs/cgroup/kubepods/pod1/cpu.weight': '100\n',
  '/sys/fs/cgroup/kubepods/pod1/cpu.stat': 'usage_usec 100\nnr_periods 40\nnr_throttled 7\nthrottled_usec 900\n',
  '/sys/fs/cgroup/kubepods/pod1/memory.max': '1073741824\n',
  '/sys/fs/cgroup/kubepods/pod1/memory.current': '4096\n',
  '/sys/fs/cgroup/kubepods/pod1/memory.events': 'oom 0\noom_kill 2\n',
};

const LINKS: Record<string, string> = {
  '/sys/class/net/eth0': '../../devices/pci0000:00/0000:00:03.0/net/eth0',
  '/sys/class/net/veth1': '../../devices/virtual/net/veth1',
  '/sys/devices/pci0000:00/0000:00:03.0/net/eth0/device': '../../../0000:00:03.0',
  '/sys/devices/pci0000:00/0000:00:03.0/driver': '../../../bus/pci/drivers/ice',
  '/sys/dev/block/259:1': '../../devices/pci0000:00/0000:00:04.0/nvme/nvme0/nvme0n1/nvme0n1p1',
};

before(async () => {
  fakeRoot = await mkdtemp(join(tmpdir(), 'trove-host-'));
  emptyRoot = await mkdtemp(join(tmpdir(), 'trove-host-empty-'));
  for (const [path, content] of Object.entries(FILES)) {
    await mkdir(dirname(join(fakeRoot, path)), { recursive: true });
    await writeFile(join(fakeRoot, path), content);
  }
  for (const [path, target] of Object.entries(LINKS)) {
    await mkdir(dirname(join(fakeRoot, path)), { recursive: true });
    await symlink(target, join(fakeRoot, path));
  }
});

after(async () => {
  await rm(fakeRoot, { recursive: true, force: true });
  await rm(emptyRoot, { recursive: true, force: true });
});

test('every fact family is read from the root it is given', async () => {
  const files = new HostFiles(fakeRoot);
  const throttle = new CgroupThrottleProbe(files);
  await throttle.sample(1_000);
  await writeFile(join(fakeRoot, '/sys/fs/cgroup/kubepods/pod1/cpu.stat'), 'nr_periods 50\nnr_throttled 12\nthrottled_usec 1500\n');
  await throttle.sample(61_000);
  const { host, warnings } = await readHostInfo({ files, dataPath: DATA_PATH, throttle, httpBacklog: 511 });

  assert.deepEqual(host.os.distribution.value, { id: 'example', name: 'Example Linux', version_id: '9.1', pretty_name: 'Example Linux 9.1' });
  assert.equal(host.os.kernel.value?.release, '6.6.1-example');
  assert.deepEqual(host.numa.topology.value, {
    node_count: 2,
    nodes: [
      { id: 0, cpus: '0-3,8', cpu_count: 5, distances: [10, 21] },
      { id: 1, cpus: '4-7', cpu_count: 4, distances: [21, 10] },
    ],
  });
  const interfaces = host.network.interfaces.value!;
  assert.deepEqual(interfaces.map((nic) => [nic.name, nic.speed_mbps.value, nic.mtu, nic.driver, nic.virtual]), [
    ['eth0', 25000, 9000, 'ice', false],
    ['veth1', null, null, null, true],
  ]);
  assert.match((interfaces[1].speed_mbps as { error: string }).error, /no negotiated link speed/);
  assert.deepEqual(host.data_disk.mount.value, { mount_point: '/srv/trove', fs_type: 'ext4', source: '/dev/nvme0n1p1', options: ['rw'], atime: 'strictatime' });
  assert.deepEqual(host.data_disk.device.value, {
    name: 'nvme0n1',
    bus: 'nvme',
    nvme: true,
    rotational: true,
    scheduler: 'none',
    schedulers: ['none', 'mq-deadline'],
    underlying: [],
  });
  assert.deepEqual(host.environment.container.value?.runtime, 'docker');
  assert.deepEqual(host.environment.container.value?.evidence, ['/.dockerenv exists', 'cgroup path mentions kubernetes', 'the root file system is an overlay']);
  assert.deepEqual(host.environment.seccomp.value, { mode: 'filter', filters: 3, no_new_privs: true });
  assert.deepEqual(host.platform.dmi.value, { sys_vendor: 'Example Corp', product_name: 'X1 Server' });
  assert.deepEqual(host.platform.hypervisor.value, { detected: true, type: 'xen' });
  assert.deepEqual(host.transparent_hugepages.value, { enabled: 'always', defrag: 'madvise' });
  const { resources } = host;
  assert.deepEqual(resources.file_descriptors.value, { soft_limit: 1024, hard_limit: 4096, open: 2 });
  assert.deepEqual(resources.memory_maps.value, { count: 3, max_map_count: 65530 });
  assert.deepEqual(resources.swap.value, { total_bytes: 204800, used_bytes: 102400, free_bytes: 102400, swappiness: 60 });
  assert.deepEqual(resources.conntrack.value, { count: 90, max: 100, fill_percent: 90 });
  assert.equal(resources.tcp['net.core.somaxconn'].value, 128);
  assert.equal(resources.tcp['net.ipv4.ip_local_port_range'].value, '32768 60999');
  assert.equal(resources.tcp['net.ipv4.tcp_fin_timeout'].value, null);
  assert.deepEqual(resources.cgroup.cpu.value, {
    version: 2,
    quota_cpus: 0.5,
    quota_us: 50000,
    period_us: 100000,
    weight: 100,
    nr_periods: 50,
    nr_throttled: 12,
    throttled_usec: 1500,
  });
  assert.deepEqual(resources.cgroup.memory.value, { version: 2, limit_bytes: 1073741824, usage_bytes: 4096, oom_kills: 2 });
  assert.deepEqual(resources.cgroup.cpu_throttling_recent.value, { window_secs: 60, throttled_periods: 5 });

  assert.deepEqual(
    warnings.map((warning) => [warning.check, warning.value, warning.recommended]),
    [
      ['file_descriptors', 1024, 65536],
      ['max_map_count', 65530, 262144],
      ['transparent_hugepages', 'always', 'madvise'],
      ['swap_in_use', 102400, 0],
      ['overcommit_memory', 2, 0],
      ['zone_reclaim_mode', 1, 0],
      ['cpu_throttling', 5, 0],
      ['conntrack_fill', 90, 80],
      ['somaxconn', 128, 511],
      ['data_path_atime', 'strictatime', 'noatime'],
      ['rotational_disk', true, false],
    ],
  );
  for (const warning of warnings) assert.ok(warning.message.length > 20, warning.check);
});

test('a root where nothing is readable yields a null and a reason for every fact, and no warning', async () => {
  const files = new HostFiles(emptyRoot);
  const throttle = new CgroupThrottleProbe(files);
  await throttle.sample(0);
  const { host, warnings } = await readHostInfo({ files, dataPath: DATA_PATH, throttle, httpBacklog: 511 });
  const facts: Array<[string, unknown]> = [];
  const walk = (node: unknown, path: string): void => {
    if (node === null || typeof node !== 'object') return;
    if ('value' in node) {
      facts.push([path, node]);
      return;
    }
    for (const [key, child] of Object.entries(node)) walk(child, path === '' ? key : `${path}.${key}`);
  };
  walk(host, '');
  assert.ok(facts.length >= 25, `found ${facts.length} facts`);
  for (const [path, item] of facts) {
    const { value, error } = item as { value: unknown; error?: string };
    assert.equal(value, null, path);
    assert.ok(typeof error === 'string' && error.length > 0, `${path} has a reason`);
  }
  assert.match((host.os.kernel as { error: string }).error, /cannot read \/proc\/sys\/kernel\/osrelease: no such file/);
  assert.deepEqual(warnings, []);
});

test('on this machine, facts the kernel exposes are read', async () => {
  const files = new HostFiles('/');
  const throttle = new CgroupThrottleProbe(files);
  const { host } = await readHostInfo({ files, dataPath: tmpdir(), throttle, httpBacklog: 511 });
  const readable = (path: string): boolean => existsSync(path);
  if (readable('/proc/sys/kernel/osrelease')) assert.notEqual(host.os.kernel.value, null);
  if (readable('/etc/os-release')) assert.notEqual(host.os.distribution.value, null);
  if (readable('/sys/devices/system/node/node0')) assert.notEqual(host.numa.topology.value, null);
  if (readable('/sys/class/net')) assert.notEqual(host.network.interfaces.value, null);
  if (readable('/proc/self/mountinfo')) assert.notEqual(host.data_disk.mount.value, null);
  if (readable('/proc/self/status')) assert.notEqual(host.environment.seccomp.value, null);
  if (readable('/sys/kernel/mm/transparent_hugepage/enabled')) assert.notEqual(host.transparent_hugepages.value, null);
  if (readable('/proc/self/limits')) assert.notEqual(host.resources.file_descriptors.value, null);
  if (readable('/proc/sys/vm/max_map_count')) assert.notEqual(host.resources.memory_maps.value, null);
  if (readable('/proc/meminfo')) assert.notEqual(host.resources.swap.value, null);
  if (readable('/proc/sys/net/netfilter/nf_conntrack_max')) assert.notEqual(host.resources.conntrack.value, null);
  if (readable('/proc/sys/net/core/somaxconn')) assert.notEqual(host.resources.tcp['net.core.somaxconn'].value, null);
  if (readable('/sys/fs/cgroup/cpu.max') || readable('/sys/fs/cgroup/cpu/cpu.cfs_quota_us')) assert.notEqual(host.resources.cgroup.cpu.value, null);
});
