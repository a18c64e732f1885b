import { embeddedSuite } from '../support/embedded-suite';
import { exportedFamilies, metricsNotExported, metricsUsedByMonitoring } from '../support/monitoring';

// Decision 40: every metric the alerting rules and the dashboard read is one the services really
// export, here on the embedded runtime as `npm start` runs it (its four ports). prom-client declares
// every registered metric with `# HELP` and `# TYPE` before its first observation, so a labelled
// counter that nothing has counted yet (a dead letter, a dropped access record) is declared too. The
// distributed runtime's four processes are checked in test/distributed/webhooks-distributed.test.ts.

const suite = embeddedSuite('rsd-monitoring-');

async function scrape(url: string): Promise<string> {
  const answer = await fetch(`${url}/metrics`);
  expect(answer.status).toBe(200);
  return answer.text();
}

describe('the metrics the alerting rules and the dashboard read, on the embedded runtime', () => {
  test('when the four ports are scraped, then every metric they name is exported, by the service its selector names', async () => {
    const { product } = suite;
    const expositions = {
      'read-api': await scrape(product.urls.readApi),
      credentials: await scrape(product.urls.credentials),
      'score-ingest': await scrape(product.urls.scoreIngest),
      notifier: await scrape(product.urls.notifier),
    };
    const used = metricsUsedByMonitoring();

    expect(metricsNotExported(used, expositions)).toEqual([]);
    // Declared before any observation: nothing has been dead-lettered, dropped or delivered here.
    expect(exportedFamilies(expositions['read-api']).get('events_dead_lettered_total')).toBe('counter');
    expect(exportedFamilies(expositions['read-api']).get('access_log_dropped_total')).toBe('counter');
    expect(exportedFamilies(expositions.notifier).get('webhook_deliveries_total')).toBe('counter');
    expect(expositions['read-api']).not.toMatch(/^events_dead_lettered_total\{/m);
  });
});
