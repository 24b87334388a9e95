/**
 * Container and sandbox environment: whether this process runs in a container (and which
 * runtime, with the evidence found), and its seccomp mode from `/proc/self/status`. Detection
 * looks at the marker files runtimes leave (`/.dockerenv`, `/run/.containerenv`), the `container`
 * variable of process 1, the process's cgroup paths, and an overlay root file system.
 */
import { fact, type Fact } from './fact.ts';
import type { HostFiles } from './host-files.ts';
import { mountOf, parseMountInfo } from './mountinfo.ts';

/** Container detection result. */
export interface ContainerEnvironment {
  detected: boolean;
  /** `docker`, `podman`, `kubernetes`, `containerd`, `lxc`, ... when recognisable. */
  runtime: string | null;
  /** What the detection is based on, one short sentence per clue. */
  evidence: string[];
}

/** Seccomp state of this process. */
export interface SeccompState {
  mode: 'disabled' | 'strict' | 'filter';
  /** Number of filters attached (kernels since 5.9 report it). */
  filters: number | null;
  no_new_privs: boolean | null;
}

/** Container facts of node info. */
export interface ContainerFacts {
  container: Fact<ContainerEnvironment>;
  seccomp: Fact<SeccompState>;
}

const CGROUP_MARKERS: ReadonlyArray<[RegExp, string]> = [
  [/kubepods/, 'kubernetes'],
  [/docker/, 'docker'],
  [/libpod/, 'podman'],
  [/crio/, 'cri-o'],
  [/containerd/, 'containerd'],
  [/lxc/, 'lxc'],
];

async function detectContainer(files: HostFiles): Promise<ContainerEnvironment> {
  const clues: Array<{ runtime: string | null; evidence: string }> = [];
  if (await files.exists('/.dockerenv')) clues.push({ runtime: 'docker', evidence: '/.dockerenv exists' });
  if (await files.exists('/run/.containerenv')) clues.push({ runtime: 'podman', evidence: '/run/.containerenv exists' });
  const environ = await files.text('/proc/1/environ').catch(() => '');
  const variable = environ.split('\0').find((entry) => entry.startsWith('container='));
  if (variable) clues.push({ runtime: variable.slice('container='.length) || null, evidence: `process 1 has ${variable}` });
  const cgroups = await files.text('/proc/self/cgroup').catch(() => null);
  const mountinfo = await files.text('/proc/self/mountinfo').catch(() => null);
  if (clues.length === 0 && cgroups === null && mountinfo === null) {
    throw new Error('cannot tell: neither /proc/self/cgroup nor /proc/self/mountinfo can be read, and no runtime marker file exists');
  }
  for (const [pattern, runtime] of CGROUP_MARKERS) {
    if (pattern.test(cgroups ?? '')) {
      clues.push({ runtime, evidence: `cgroup path mentions ${runtime}` });
      break;
    }
  }
  const mounts = parseMountInfo(mountinfo ?? '');
  const root = mountOf(mounts, '/');
  if (root?.fsType === 'overlay') clues.push({ runtime: null, evidence: 'the root file system is an overlay' });
  return {
    detected: clues.length > 0,
    runtime: clues.find((clue) => clue.runtime !== null)?.runtime ?? null,
    evidence: clues.map((clue) => clue.evidence),
  };
}

async function readSeccomp(files: HostFiles): Promise<SeccompState> {
  const status = await files.keyValues('/proc/self/status');
  const mode = status.get('Seccomp');
  if (mode === undefined) throw new Error('/proc/self/status has no Seccomp field (kernel built without seccomp)');
  const filters = status.get('Seccomp_filters');
  const noNewPrivs = status.get('NoNewPrivs');
  return {
    mode: mode === '2' ? 'filter' : mode === '1' ? 'strict' : 'disabled',
    filters: filters === undefined ? null : Number(filters),
    no_new_privs: noNewPrivs === undefined ? null : noNewPrivs === '1',
  };
}

/** Reads the container facts. */
export async function readContainerFacts(files: HostFiles): Promise<ContainerFacts> {
  const [container, seccomp] = await Promise.all([fact(() => detectContainer(files)), fact(() => readSeccomp(files))]);
  return { container, seccomp };
}
