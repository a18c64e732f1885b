import { execFile, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { REPO_ROOT, eventually, untilReady } from './embedded-process';
import type { ServiceProcess } from './service-process';

const run = promisify(execFile);

/**
 * The distributed suite against the one-node cluster of scripts/k8s.sh instead of processes of its
 * own: RSD_DISTRIBUTED_STACK=k8s, with the cluster's `env` exported (KUBECONFIG, its kubectl first on
 * the PATH, READ_URL, CRED_URL, INGEST_URL), KAFKA_BROKERS and MONGO_URL at the NodePorts of
 * scripts/infra/k8s/addons/infrastructure.yaml, JWT_HS256_SECRET and RESPONSE_SIGNING_KEYS as the
 * cluster's Secret has them. scripts/ci/k8s.sh sets all of it. Every read goes through the read API's
 * Service (its NodePort on 127.0.0.1) to whichever of its pods kube-proxy picks; a replica of the
 * suite is one of those pods, stopped by deleting it (SIGKILL: with no grace period) and started
 * again by the Deployment's replacement becoming ready.
 */
export const onK8sStack = process.env.RSD_DISTRIBUTED_STACK === 'k8s';

/** The cluster's database names (k8s/base/config): its services are configured with them. */
export const K8S_DATABASES = { credentials: 'rsd_credentials', readViews: 'rsd_read_views' };

/** The timings scripts/ci/k8s.sh gives the services for the suite, as the suites give their processes. */
export const K8S_TEST_TIMINGS = { FEED_STALENESS_BOUND_MS: '5000' };

const NAMESPACE = 'rsd';
const READ_API = 'app.kubernetes.io/name=rsd-read-api';
const CONTAINERD = '/run/rsd-k8s/containerd.sock';

function origin(variable: string): string {
  const value = process.env[variable];
  if (!value) throw new Error(`on the cluster, ${variable} names its Service (scripts/k8s.sh env)`);
  return new URL(value).origin;
}

export async function kubectl(...args: string[]): Promise<string> {
  const { stdout } = await run('kubectl', ['-n', NAMESPACE, ...args], { cwd: REPO_ROOT, maxBuffer: 256 * 1024 * 1024 });
  return stdout;
}

function logsOf(selector: string): string {
  const logs = spawnSync('kubectl', ['-n', NAMESPACE, 'logs', '-l', selector, '--tail=-1', '--max-log-requests=20'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  return `${logs.stdout}${logs.stderr}`;
}

/** The read API's pods that are ready, by name and address. */
async function readyReadPods(): Promise<{ name: string; ip: string }[]> {
  type Pods = {
    items: {
      metadata: { name: string; deletionTimestamp?: string };
      status: { podIP?: string; conditions?: { type: string; status: string }[] };
    }[];
  };
  const pods = JSON.parse(await kubectl('get', 'pods', '-l', READ_API, '-o', 'json')) as Pods;
  return pods.items
    .filter((pod) => !pod.metadata.deletionTimestamp && pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
    .map((pod) => ({ name: pod.metadata.name, ip: pod.status.podIP ?? '' }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** The addresses the Service sends to (its EndpointSlices' ready endpoints). */
async function serviceAddresses(): Promise<string[]> {
  const jsonpath = '{range .items[*].endpoints[?(@.conditions.ready==true)]}{.addresses[0]}{"\\n"}{end}';
  return (await kubectl('get', 'endpointslices', '-l', 'kubernetes.io/service-name=rsd-read-api', '-o', `jsonpath=${jsonpath}`))
    .split('\n')
    .filter(Boolean);
}

export interface K8sService extends ServiceProcess {
  /** The pod this replica stands for (read-API replicas only). */
  pod?: string;
  /** Its pod's own address, reachable from this machine on the cluster's bridge (read-API replicas only). */
  podUrl?: string;
  /** The Deployment's replacement ready and in the Service again. */
  start(): Promise<void>;
}

/** credentials or score ingest: its Service on 127.0.0.1 and every pod's log. */
export async function k8sService(name: 'credentials' | 'score-ingest'): Promise<K8sService> {
  const url = origin(name === 'credentials' ? 'CRED_URL' : 'INGEST_URL');
  await untilReady(url);
  const notHere = () => Promise.reject(new Error(`the suite never stops rsd-${name} on the cluster`));
  return { url, output: () => logsOf(`app.kubernetes.io/name=rsd-${name}`), stop: notHere, start: notHere };
}

/**
 * A read-API replica: the Service's URL, standing for one ready pod that no replica in `taken` stands
 * for. stop() deletes that pod (SIGTERM after its preStop, or SIGKILL with no grace period) and
 * resolves once the Service no longer sends to it; start() waits for a ready pod that no other
 * replica stands for, and for the Service to send to it.
 */
export async function k8sReadReplica(taken: () => string[]): Promise<K8sService> {
  const url = origin('READ_URL');
  const earlier: string[] = [];
  const replica: K8sService = {
    url,
    output: () => [...earlier, replica.pod ? podLogs(replica.pod) : ''].join(''),
    stop: async (signal: NodeJS.Signals = 'SIGTERM') => {
      const pod = replica.pod;
      if (!pod) return;
      const ip = new URL(replica.podUrl!).hostname;
      earlier.push(podLogs(pod));
      const grace = signal === 'SIGKILL' ? ['--grace-period=0', '--force'] : [];
      await kubectl('delete', 'pod', pod, ...grace, '--wait=true', '--timeout=120s');
      await eventually(async () => (!(await serviceAddresses()).includes(ip) ? true : undefined), 60_000, 200);
      // kube-proxy rewrites its rules once the EndpointSlice changes: give it a sync. Fixed because nothing
      // the cluster's API shows says when a node's kube-proxy has applied the change.
      await new Promise((done) => setTimeout(done, 2_000));
      replica.pod = undefined;
    },
    start: async () => {
      const found = await eventually(
        async () => {
          const free = (await readyReadPods()).find((pod) => !taken().includes(pod.name));
          return free && (await serviceAddresses()).includes(free.ip) ? free : undefined;
        },
        180_000,
        500,
      );
      replica.pod = found.name;
      replica.podUrl = `http://${found.ip}:8080`;
      await untilReady(url, 60_000);
    },
  };
  await replica.start();
  return replica;
}

function podLogs(pod: string): string {
  const logs = spawnSync('kubectl', ['-n', NAMESPACE, 'logs', pod], { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  return `${logs.stdout}`;
}

/** The processes of the cluster's Kafka container: its first process (from the CRI) and every descendant. */
async function kafkaProcesses(): Promise<number[]> {
  const crictl = [`${REPO_ROOT}/.infra/k8s/bin/crictl`, '--runtime-endpoint', `unix://${CONTAINERD}`] as const;
  const { stdout: ids } = await run(crictl[0], [...crictl.slice(1), 'ps', '--name', '^kafka$', '--state', 'running', '-q']);
  const id = ids.trim().split('\n')[0];
  if (!id) throw new Error('no running Kafka container on the cluster');
  const { stdout: pid } = await run(crictl[0], [...crictl.slice(1), 'inspect', '-o', 'go-template', '--template', '{{.info.pid}}', id]);
  const all: number[] = [];
  const visit = (p: number) => {
    all.push(p);
    for (const task of readdirSync(`/proc/${p}/task`)) {
      const children = readFileSync(`/proc/${p}/task/${task}/children`, 'utf8').trim();
      for (const child of children ? children.split(' ') : []) visit(Number(child));
    }
  };
  visit(Number(pid.trim()));
  return all;
}

let pausedKafka: number[] = [];

/**
 * Kafka out of reach and back: every process of its container stopped (SIGSTOP, from this machine,
 * which runs the cluster) and continued. Its data is an emptyDir, which a stopped pod would lose, and
 * this kernel's cgroup v1 freezer refuses `ctr tasks pause`; a stopped broker holds its connections
 * and answers nothing until it is continued.
 */
export async function pauseKafka(): Promise<void> {
  pausedKafka = await kafkaProcesses();
  for (const pid of pausedKafka) process.kill(pid, 'SIGSTOP');
}

export function resumeKafka(): Promise<void> {
  for (const pid of pausedKafka) process.kill(pid, 'SIGCONT');
  pausedKafka = [];
  return Promise.resolve();
}

/** The image's own script in a read-API pod (its configuration, its network). */
export async function execInReadApi(...command: string[]): Promise<string> {
  return kubectl('exec', 'deployment/rsd-read-api', '--', ...command);
}
