import { randomBytes, randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { CONSOLE_SESSION_KEY } from '@rsd/console';
import { CONSOLE_SIGNING_KEY, consoleSigner, consoleSigningKeyOf } from '@rsd/platform';
import { describeWithInfra, type StartedServer } from '@rsd/testkit';
import { startDistributedServers } from '../../support/distributed-servers';
import { freePort } from '../../support/raw-http';
import { startService, type ServiceProcess } from '../../support/service-process';
import { hostileClientTests } from './hostile-client-suite';

describeWithInfra('kafka', 'a hostile client against the distributed runtime (five service processes)', (kafkaTarget) => {
  hostileClientTests(async (env) => {
    const runId = randomUUID().slice(0, 8);
    const servers: StartedServer[] = [];
    const services: ServiceProcess[] = [];
    const stop = async () => {
      for (const service of services) await service.stop();
      if (shared.MONGO_URL) {
        const client = await MongoClient.connect(shared.MONGO_URL);
        for (const name of [shared.CREDENTIALS_DB!, shared.READ_VIEWS_DB!, shared.NOTIFIER_DB!]) await client.db(name).dropDatabase();
        await client.close();
      }
      for (const server of servers) await server.stop();
    };
    const shared: Record<string, string> = {};
    try {
      const infraEnv = await startDistributedServers(kafkaTarget(), servers);
      const [readApiPort, credentialsPort, scoreIngestPort, notifierPort, consolePort] = [
        await freePort(),
        await freePort(),
        await freePort(),
        await freePort(),
        await freePort(),
      ];
      // The console's own key (decision 51): the APIs verify its tokens with the public half alone.
      const consoleKey = CONSOLE_SIGNING_KEY.generate();
      const consoleJwk = (await consoleSigner(consoleSigningKeyOf(consoleKey)).jwks()).keys[0];
      Object.assign(shared, {
        ...env,
        ...infraEnv,
        CREDENTIALS_DB: `hostile_credentials_${runId}`,
        READ_VIEWS_DB: `hostile_views_${runId}`,
        NOTIFIER_DB: `hostile_notifier_${runId}`,
        KAFKA_TOPIC_PARTITIONS: '3',
        READ_API_PORT: String(readApiPort),
        CREDENTIALS_PORT: String(credentialsPort),
        SCORE_INGEST_PORT: String(scoreIngestPort),
        OUTBOX_RELAY_INTERVAL_MS: '500',
        CONSOLE_PUBLIC_KEY: JSON.stringify(consoleJwk),
        CONSOLE_PUBLIC_URL: `http://127.0.0.1:${consolePort}`,
      });
      services.push(await startService('credentials', credentialsPort, shared));
      services.push(await startService('score-ingest', scoreIngestPort, shared));
      services.push(await startService('read-api', readApiPort, shared));
      // The notifier alone holds the key that seals its webhooks' secrets.
      services.push(
        await startService('notifier', notifierPort, {
          ...shared,
          NOTIFIER_PORT: String(notifierPort),
          WEBHOOK_SECRET_KEY: randomBytes(32).toString('base64'),
        }),
      );
      services.push(
        await startService('console', consolePort, {
          ...shared,
          CONSOLE_PORT: String(consolePort),
          CREDENTIALS_URL: `http://127.0.0.1:${credentialsPort}`,
          NOTIFIER_URL: `http://127.0.0.1:${notifierPort}`,
          CONSOLE_SIGNING_KEY: consoleKey,
          CONSOLE_SESSION_KEY: CONSOLE_SESSION_KEY.generate(),
        }),
      );
      const [credentials, scoreIngest, readApi, notifier, consoleUrl] = services.map((s) => s.url);
      return {
        urls: { readApi: readApi!, credentials: credentials!, scoreIngest: scoreIngest!, notifier: notifier!, console: consoleUrl! },
        stop,
      };
    } catch (error) {
      await stop();
      throw error;
    }
  });
});
