import { randomInt, randomUUID } from 'node:crypto';
import { EVENT_TYPES } from '@rsd/contracts';
import { aScoreSubmission } from '@rsd/testkit';
import type { CertificateTarget } from './certificate-scenarios';
import { eventually } from './embedded-process';
import { readableIn } from './leak-search';
import * as orgAdmin from './organization-admin';

/*
 * Decision 56's sealed events as an operator meets them, on any runtime: what a product writes to its
 * event log (the raw records of the Kafka topics, the `events` of rsd.sqlite) holds no recipient name,
 * allow-listed address or score of the organization readable, while the APIs serve them as before.
 */

export interface SealedLogTarget extends CertificateTarget {
  /** Every raw record of the product's event log, as stored. */
  logValues(): Promise<string[]>;
}

/** The events the scenario writes, whose fields are sealed. */
const SEALED_TYPES = [`"type":"${EVENT_TYPES.authorizationCreated}"`, `"type":"${EVENT_TYPES.scoreCalculated}"`];

export function sealedLogScenarios(target: () => SealedLogTarget) {
  const t = () => target();
  return {
    "when a grant with a recipient's name and allow list and a score are written, then the log holds none of them readable, and the APIs serve them":
      async () => {
        const run = randomUUID().slice(0, 8);
        const org = `seal-${run}`;
        const name = `Sealed Recipient ${run}`;
        const address = `192.0.2.${randomInt(1, 255)}`;
        const token = await t().tokenFor(org);
        await orgAdmin.postScore(
          t().scoreIngest,
          token,
          aScoreSubmission({ organizationId: org, scoreDate: '2026-11-20', score: 87, grade: 'Sustain' }),
        );
        const credential = await orgAdmin.createAuthorization(t().credentials, org, token, {
          recipientType: 'insurance_provider',
          recipientName: name,
          scopes: ['qr_score'],
          allowedCidrs: ['127.0.0.1/32', `${address}/32`],
        });

        // The read path is unchanged: the views hold what they serve (the name on the certificate, the score).
        for (const readApi of t().readApis) {
          const certificate = await eventually(async () => {
            const answer = await fetch(`${readApi}/v1/customers/${credential.clientId}/certificate`, {
              headers: { 'x-api-key': credential.apiKey },
            });
            return answer.status === 200
              ? ((await answer.json()) as { certificate: { score: number; recipient: { name: string } } })
              : undefined;
          }, 30_000);
          expect(certificate.certificate).toMatchObject({ score: 87, recipient: { name } });
        }

        // Both events are in the log by now (each was projected), sealed: only their clear fields name the organization.
        // Other records may name it too and have nothing to seal (an alert of failed reads while the grant reached a
        // replica): none holds anything readable.
        const ofOrganization = await eventually(async () => {
          const values = (await t().logValues()).filter((value) => value.includes(org));
          return values.filter((value) => SEALED_TYPES.some((type) => value.includes(type))).length >= 2 ? values : undefined;
        }, 30_000);
        const sealedTypes = ofOrganization.filter((value) => SEALED_TYPES.some((type) => value.includes(type)));
        expect(sealedTypes.every((value) => value.includes('"rsdsealed":1'))).toBe(true);
        expect(readableIn(ofOrganization, [name, address, '"score":', '"grade":', '"pillarScores":'])).toEqual([]);
      },
  };
}
