import { randomInt } from 'node:crypto';
import { GRADES } from '@rsd/contracts';
import { signDevToken } from '@rsd/platform';
import { call, type Outcome } from './http';
import { RevocationWatch, type Credential } from './revocations';
import type { Tally } from './tally';

/**
 * The mix, per second: reads on both replicas (one credential's share stays well under its 120 per
 * minute), score batches, creates and revokes (the pool of usable credentials stays about level).
 */
export const MIX = {
  readsPerSecond: 40,
  ingestsPerSecond: 2,
  scoresPerBatch: 5,
  createsPerSecond: 0.5,
  revokesPerSecond: 0.5,
  organizations: 10,
  initialCredentials: 40,
  /** Revokes wait while fewer credentials than this are in use, so reads stay spread. */
  minimumPool: 25,
};

/** At most this many requests of one kind at once; a tick beyond it is skipped and counted. */
export const MAX_IN_FLIGHT = 64;

export interface Endpoints {
  readApis: string[];
  credentials: string;
  scoreIngest: string;
}

interface Pacer {
  skipped: number;
  stop(): Promise<void>;
}

/** Starts `task` `perSecond` times a second, whatever the answers take (an open loop, as real clients are). */
function pace(perSecond: number, task: () => Promise<void>): Pacer {
  const inFlight = new Set<Promise<void>>();
  const pacer: Pacer = {
    skipped: 0,
    stop: async () => {
      clearInterval(timer);
      await Promise.all(inFlight);
    },
  };
  const timer = setInterval(() => {
    if (inFlight.size >= MAX_IN_FLIGHT) {
      pacer.skipped += 1;
      return;
    }
    const running = task();
    inFlight.add(running);
    void running.finally(() => inFlight.delete(running));
  }, 1000 / perSecond);
  return pacer;
}

const pick = <T>(items: readonly T[]): T => items[randomInt(items.length)]!;
const today = () => new Date().toISOString().slice(0, 10);
const json = { 'content-type': 'application/json' };

function randomScore(organizationId: string) {
  const pillar = () => randomInt(101);
  return {
    organizationId,
    scoreDate: today(),
    score: randomInt(101),
    grade: pick(GRADES),
    pillarScores: { structuralIntegrity: pillar(), failureResistance: pillar(), deviceHealth: pillar(), recoveryCapability: pillar() },
  };
}

/** Organizations, their administrators' tokens, a scoring engine's token, and the credentials in use. */
export class Workload {
  readonly pool = new Map<string, Credential>();
  private readonly adminTokens = new Map<string, string>();
  private engineToken = '';
  private pacers: Record<string, Pacer> = {};
  private readCount = 0;

  constructor(
    private readonly endpoints: Endpoints,
    private readonly tally: Tally,
    private readonly revocations: RevocationWatch,
    private readonly secret: string,
    private readonly runId: string,
  ) {}

  /** Tokens, the first credentials and a score for every organization; waits until both replicas serve them. */
  async seed(): Promise<void> {
    for (let i = 0; i < MIX.organizations; i += 1) {
      const organizationId = `soak-${this.runId}-${i}`;
      this.adminTokens.set(organizationId, await signDevToken(this.secret, { org: organizationId, scope: 'authorizations:write' }, '24h'));
    }
    this.engineToken = await signDevToken(this.secret, { scope: 'scores:write', sub: 'soak-engine' }, '24h');
    const organizations = [...this.adminTokens.keys()];
    const batch = await this.ingest(organizations);
    if (!batch.answered || batch.status !== 202) throw new Error(`seeding scores failed: ${describe(batch)}`);
    for (let i = 0; i < MIX.initialCredentials; i += 1) {
      const created = await this.create(organizations[i % organizations.length]!);
      if (!created.answered || created.status !== 201) throw new Error(`seeding credentials failed: ${describe(created)}`);
    }
    const deadline = Date.now() + 60_000;
    for (const credential of this.pool.values()) {
      for (const replica of this.endpoints.readApis) {
        while ((await this.readOnce(replica, credential, 'score')).status !== 200) {
          if (Date.now() > deadline) throw new Error(`${credential.clientId} not readable on ${replica} within 60 s of seeding`);
          await new Promise((done) => setTimeout(done, 100));
        }
      }
    }
  }

  start(): void {
    this.pacers = {
      read: pace(MIX.readsPerSecond, () => this.read()),
      ingest: pace(MIX.ingestsPerSecond, async () => {
        const organizations = Array.from({ length: MIX.scoresPerBatch }, () => pick([...this.adminTokens.keys()]));
        this.tally.record('ingest (batch)', await this.ingest(organizations));
      }),
      create: pace(MIX.createsPerSecond, async () => {
        this.tally.record('create', await this.create(pick([...this.adminTokens.keys()])));
      }),
      revoke: pace(MIX.revokesPerSecond, () => this.revoke()),
    };
  }

  /** Stops every loop and waits for the requests in flight. Returns the ticks skipped per loop. */
  async stop(): Promise<Record<string, number>> {
    await Promise.all(Object.values(this.pacers).map((p) => p.stop()));
    return Object.fromEntries(Object.entries(this.pacers).map(([name, p]) => [name, p.skipped]));
  }

  private async read(): Promise<void> {
    if (this.pool.size === 0) return;
    this.readCount += 1;
    const replica = this.endpoints.readApis[this.readCount % this.endpoints.readApis.length]!;
    const resource = this.readCount % 4 < 2 ? 'score' : 'pillars';
    const outcome = await this.readOnce(replica, pick([...this.pool.values()]), resource);
    this.tally.record(`read /${resource}`, outcome);
  }

  private async readOnce(replica: string, credential: Credential, resource: 'score' | 'pillars') {
    const outcome = await call(`${replica}/v1/customers/${credential.clientId}/${resource}`, {
      headers: { 'x-api-key': credential.apiKey },
    });
    return { ...outcome, status: outcome.answered ? outcome.status : 0 };
  }

  private ingest(organizations: string[]): Promise<Outcome> {
    return call(`${this.endpoints.scoreIngest}/v1/scores`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${this.engineToken}` },
      body: JSON.stringify({ scores: organizations.map(randomScore) }),
    });
  }

  private async create(organizationId: string): Promise<Outcome> {
    const outcome = await call(`${this.endpoints.credentials}/v1/organizations/${organizationId}/authorizations`, {
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${this.adminTokens.get(organizationId)!}` },
      body: JSON.stringify({
        recipientType: pick(['insurance_provider', 'auditor', 'regulatory_body', 'partner']),
        scopes: ['qr_score', 'pillar_breakdown'],
      }),
    });
    if (outcome.answered && outcome.status === 201) {
      const { clientId, apiKey } = outcome.body as { clientId: string; apiKey: string };
      this.pool.set(clientId, { clientId, apiKey, organizationId });
    }
    return outcome;
  }

  /** Takes a credential out of use, then revokes it; one that was not revoked goes back (its organization would retry). */
  private async revoke(): Promise<void> {
    if (this.pool.size <= MIX.minimumPool) return;
    const credential = pick([...this.pool.values()]);
    this.pool.delete(credential.clientId);
    const { organizationId, clientId } = credential;
    const outcome = await call(`${this.endpoints.credentials}/v1/organizations/${organizationId}/authorizations/${clientId}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.adminTokens.get(organizationId)!}` },
    });
    const answeredAt = Date.now();
    this.tally.record('revoke', outcome);
    // 202 is decision 29's `"enforcement": "pending"`: the replicas' staleness bound applies.
    if (outcome.answered && outcome.status === 200) this.revocations.watch(credential, 'confirmed', answeredAt);
    else if (outcome.answered && outcome.status === 202) this.revocations.watch(credential, 'pending', answeredAt);
    else this.pool.set(clientId, credential);
  }
}

export function describe(outcome: Outcome): string {
  return outcome.answered ? `${outcome.status} ${JSON.stringify(outcome.body)}` : `no answer (${outcome.error})`;
}
