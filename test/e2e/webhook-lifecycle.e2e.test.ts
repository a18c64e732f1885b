import { ageEmbeddedFirstAttempts } from '../support/aged-deliveries';
import type { EmbeddedProcess } from '../support/embedded-process';
import { devTokenFor, startEmbeddedOnNewDataDir, stopAndRemove } from '../support/embedded-suite';
import { describeWebhookLifecycle } from '../support/webhook-lifecycle';

// Decision 45 on `npm start`: the product as one process, its SQLite database in a data directory of
// this suite's own, receivers on loopback (so decision 28's development flag).

let dataDir: string;
let product: EmbeddedProcess;
/** A second product as deployed: without the development flag. */
let strictDataDir: string;
let strictProduct: EmbeddedProcess;

beforeAll(async () => {
  ({ dataDir, product } = await startEmbeddedOnNewDataDir('rsd-webhook-lifecycle-', { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }));
  ({ dataDir: strictDataDir, product: strictProduct } = await startEmbeddedOnNewDataDir('rsd-webhook-strict-'));
}, 120_000);

afterAll(async () => {
  await stopAndRemove(product, dataDir);
  await stopAndRemove(strictProduct, strictDataDir);
});

describeWebhookLifecycle('embedded', () => ({
  notifierUrl: product.urls.notifier,
  credentialsUrl: product.urls.credentials,
  scoreIngestUrl: product.urls.scoreIngest,
  tokenFor: (org) => devTokenFor(dataDir, org),
  receiverHost: '127.0.0.1',
  ageFirstAttempts: (webhookId) => ageEmbeddedFirstAttempts(dataDir, webhookId),
  strict: () => ({
    notifierUrl: strictProduct.urls.notifier,
    credentialsUrl: strictProduct.urls.credentials,
    tokenFor: (org) => devTokenFor(strictDataDir, org),
  }),
}));
