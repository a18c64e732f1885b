import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { parse } from 'yaml';
import { anchorsOf } from '../support/docs';
import { REPO_ROOT } from '../support/embedded-process';
import {
  MONITORING_FILES,
  alertingRules,
  dashboard,
  dashboardPanels,
  dashboardQueries,
  metricNamesIn,
  metricsNotExported,
  metricsUsedByMonitoring,
  readRepoFile,
  ruleGroups,
} from '../support/monitoring';

/**
 * Decision 40's files, without a Prometheus: the PrometheusRule holds exactly the plain rules, every
 * alert is documented and unit-tested both ways, the dashboard imports as is. promtool itself checks
 * and runs the rules in scripts/ci/alerts.sh; the metric names are checked against the services'
 * /metrics in test/e2e/monitoring-metrics.e2e.test.ts and the distributed webhooks suite.
 */
describe('the alerting rules', () => {
  test('when the production overlay is read, then its PrometheusRule holds exactly the groups of the plain rule file', () => {
    const resource = parse(readRepoFile(MONITORING_FILES.prometheusRule)) as {
      apiVersion: string;
      kind: string;
      metadata: { name: string };
      spec: { groups: unknown };
    };
    expect([resource.apiVersion, resource.kind, resource.metadata.name]).toEqual([
      'monitoring.coreos.com/v1',
      'PrometheusRule',
      'rsd-alerts',
    ]);
    expect(resource.spec.groups).toEqual(ruleGroups());
    expect(readRepoFile('k8s/overlays/production/kustomization.yaml')).toMatch(/^\s+- prometheus-rules\.yaml$/m);
  });

  test('when the generator is asked, then the PrometheusRule is what it makes of the plain rules (node scripts/monitoring/prometheus-rule.mjs)', () => {
    expect(() =>
      execFileSync(process.execPath, [join(REPO_ROOT, 'scripts/monitoring/prometheus-rule.mjs'), '--check'], { stdio: 'pipe' }),
    ).not.toThrow();
  });

  test('when the rules are read, then they are group rsd with at least the eight conditions of decision 40', () => {
    expect(ruleGroups().map((group) => group.name)).toEqual(['rsd']);
    const metricsAlertedOn = new Set(alertingRules().flatMap((rule) => [...metricNamesIn(rule.expr).keys()]));
    for (const metric of [
      'event_feed_staleness_seconds',
      'event_consumer_lag',
      'events_dead_lettered_total',
      'rate_limit_store_fallback',
      'webhook_oldest_pending_seconds',
      'access_log_dropped_total',
      'http_requests_total',
      'http_request_duration_seconds_bucket',
    ])
      expect([metric, metricsAlertedOn.has(metric)]).toEqual([metric, true]);
  });

  // The runbooks page on the repository's site: package.json's repository, its default branch.
  const repository = (JSON.parse(readRepoFile('package.json')) as { repository: { url: string } }).repository.url;
  const runbooksPage = `${repository.replace(/^git\+/, '').replace(/\.git$/, '')}/blob/main/docs/operators/runbooks.md`;

  test.each(alertingRules().map((rule) => [rule.alert, rule] as const))(
    'when %s is read, then it has a severity, a summary, a description and an absolute link to its runbook',
    (alert, rule) => {
      expect(alert).toMatch(/^RSD[A-Za-z]+$/);
      expect(['critical', 'warning']).toContain(rule.labels?.severity);
      expect(rule.annotations?.summary?.length).toBeGreaterThan(10);
      expect(rule.annotations?.description?.length).toBeGreaterThan(10);
      expect(runbooksPage).toMatch(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+\/blob\/main\/docs\/operators\/runbooks\.md$/);
      expect(rule.annotations?.runbook_url).toBe(`${runbooksPage}#${alert.toLowerCase()}`);
    },
  );

  test('when the runbooks page is read, then each runbook_url names one of its sections (the runbook of every alert)', () => {
    const anchors = anchorsOf(readRepoFile('docs/operators/runbooks.md'));
    const missing = alertingRules()
      .map((rule) => rule.annotations?.runbook_url ?? '')
      .filter((url) => !anchors.has(url.slice(url.indexOf('#') + 1)));
    expect(missing).toEqual([]);
  });

  test('when the rules are put on another base, then every runbook_url moves there with its section, and nothing else changes', () => {
    const rules = readRepoFile(MONITORING_FILES.rules);
    const rebased = execFileSync(
      process.execPath,
      [join(REPO_ROOT, 'scripts/monitoring/runbook-urls.mjs'), '--base', 'https://wiki.example.com/ops/rsd-runbooks'],
      { encoding: 'utf8' },
    );
    const changed = rebased.split('\n').filter((line, i) => line !== rules.split('\n')[i]);
    expect(changed).toEqual(
      alertingRules().map((rule) => `          runbook_url: https://wiki.example.com/ops/rsd-runbooks#${rule.alert.toLowerCase()}`),
    );
    expect(
      execFileSync(process.execPath, [join(REPO_ROOT, 'scripts/monitoring/runbook-urls.mjs'), '--default'], { encoding: 'utf8' }).trim(),
    ).toBe(runbooksPage);
  });

  test("when the production overlay is read, then it puts the runbook links on RUNBOOK_BASE_URL, the repository's page by default", () => {
    expect(readRepoFile('k8s/overlays/production/runbooks.env')).toMatch(
      new RegExp(`^RUNBOOK_BASE_URL=${runbooksPage.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'),
    );
    const kustomization = parse(readRepoFile('k8s/overlays/production/kustomization.yaml')) as {
      configMapGenerator: { name: string; envs?: string[]; options?: { annotations?: Record<string, string> } }[];
      replacements: {
        source: { name: string; fieldPath: string };
        targets: { select: { kind: string }; fieldPaths: string[]; options: unknown }[];
      }[];
    };
    const generator = kustomization.configMapGenerator.find((g) => g.name === 'rsd-runbook-links');
    expect(generator?.envs).toEqual(['runbooks.env']);
    expect(generator?.options?.annotations).toEqual({ 'config.kubernetes.io/local-config': 'true' });
    expect(kustomization.replacements).toContainEqual({
      source: { kind: 'ConfigMap', name: 'rsd-runbook-links', fieldPath: 'data.RUNBOOK_BASE_URL' },
      targets: [
        {
          select: { kind: 'PrometheusRule', name: 'rsd-alerts' },
          fieldPaths: ['spec.groups.*.rules.*.annotations.runbook_url'],
          options: { delimiter: '#', index: 0 },
        },
      ],
    });
  });

  test('when the promtool tests are read, then every alert has a case that fires it and one where it stays silent', () => {
    const file = parse(readRepoFile(MONITORING_FILES.ruleTests), { merge: true }) as {
      rule_files: string[];
      tests: { alert_rule_test?: { alertname: string; exp_alerts?: unknown[] }[] }[];
    };
    expect(file.rule_files).toEqual(['alerts.rules.yml']);
    const cases = file.tests.flatMap((test) => test.alert_rule_test ?? []);
    for (const { alert } of alertingRules()) {
      const mine = cases.filter((c) => c.alertname === alert);
      expect([alert, mine.some((c) => (c.exp_alerts ?? []).length > 0), mine.some((c) => (c.exp_alerts ?? []).length === 0)]).toEqual([
        alert,
        true,
        true,
      ]);
    }
  });
});

describe('the Grafana dashboard', () => {
  const board = dashboard();

  test('when it is imported, then it asks for a Prometheus data source and every panel and query uses it', () => {
    expect(board.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(board.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(board.templating.list.find((variable) => variable.name === 'datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
    });
    for (const panel of dashboardPanels(board).filter((p) => p.type !== 'row')) {
      expect([panel.title, panel.datasource]).toEqual([panel.title, { type: 'prometheus', uid: '${datasource}' }]);
      expect(panel.targets?.length).toBeGreaterThan(0);
      for (const target of panel.targets ?? []) {
        expect([panel.title, target.datasource?.uid, target.expr?.length]).toEqual([panel.title, '${datasource}', expect.any(Number)]);
      }
      expect(new Set((panel.targets ?? []).map((target) => target.refId)).size).toBe(panel.targets?.length);
    }
  });

  test('when it is laid out, then its panel ids are unique and every panel fits the 24 columns', () => {
    const panels = dashboardPanels(board);
    expect(new Set(panels.map((panel) => panel.id)).size).toBe(panels.length);
    for (const { title, gridPos } of panels)
      expect([title, gridPos.x >= 0 && gridPos.w > 0 && gridPos.x + gridPos.w <= 24]).toEqual([title, true]);
  });

  test('when it is read, then it shows what decision 40 asks for', () => {
    const used = new Set(dashboardQueries(board).flatMap((query) => [...metricNamesIn(query).keys()]));
    for (const metric of [
      'http_requests_total',
      'http_request_duration_seconds_bucket',
      'rate_limit_rejections_total',
      'rate_limit_store_fallback',
      'event_consumer_lag',
      'event_feed_staleness_seconds',
      'events_dead_lettered_total',
      'webhook_queue_depth',
      'webhook_oldest_pending_seconds',
      'webhook_deliveries_total',
      'access_log_dropped_total',
      'access_log_buffered',
    ])
      expect([metric, used.has(metric)]).toEqual([metric, true]);
  });
});

describe('metric names in PromQL', () => {
  const names = (query: string) => Object.fromEntries([...metricNamesIn(query)].map(([name, services]) => [name, [...services].sort()]));

  test('when an expression aggregates, calls functions and matches labels, then only its metrics are named, with the service it requires', () => {
    expect(
      names(
        'histogram_quantile(0.99, sum by (job, le) (rate(http_request_duration_seconds_bucket{service="read-api", route=~"/v1/.+"}[5m]))) > 0.25 and on (job) sum without (instance) (increase(http_request_duration_seconds_count[5m])) >= 100',
      ),
    ).toEqual({ http_request_duration_seconds_bucket: ['read-api'], http_request_duration_seconds_count: [] });
    expect(names('(x_total unless x_total offset 15m) or increase(x_total{topic="a"}[15m]) > bool 0')).toEqual({ x_total: [] });
    expect(names('a / ignoring (status) group_left (route) b{service=~"$service"}')).toEqual({ a: [], b: [] });
  });

  test("when a query uses Grafana's variables and label_replace, then neither is taken for a metric", () => {
    expect(
      names(
        'sum by (class) (label_replace(rate(http_requests_total{job=~"$job", status=~"5.."}[$__rate_interval]), "class", "${1}xx", "status", "(.).."))',
      ),
    ).toEqual({ http_requests_total: [] });
    expect(names('label_values(http_requests_total{job=~"$job"}, service)')).toEqual({ http_requests_total: [] });
    expect(names('label_values(job)')).toEqual({});
    expect(names('{__name__="up", job="x"}')).toEqual({ up: [] });
  });

  test('when names are checked against expositions, then histogram series, HELP-only families and the required service count', () => {
    const readApi = '# HELP h_seconds h\n# TYPE h_seconds histogram\n# HELP g g\n# TYPE g gauge\n';
    const notifier = '# TYPE w gauge\nw 0\n';
    const used = new Map([
      ['h_seconds_bucket', new Set(['read-api'])],
      ['h_seconds_count', new Set<string>()],
      ['g', new Set<string>()],
      ['w', new Set(['read-api'])],
      ['nowhere', new Set<string>()],
    ]);
    expect(metricsNotExported(used, { 'read-api': readApi, notifier })).toEqual(['nowhere', 'w on read-api']);
  });

  test('when every query of the rules and the dashboard is read, then the names found are the ones they are made of', () => {
    expect([...metricsUsedByMonitoring().keys()].sort()).toEqual([
      'access_log_buffered',
      'access_log_dropped_total',
      'access_log_publish_failures_total',
      'access_log_published_total',
      'event_consumer_lag',
      'event_feed_staleness_seconds',
      'events_dead_lettered_total',
      'http_request_duration_seconds_bucket',
      'http_request_duration_seconds_count',
      'http_requests_total',
      'nodejs_eventloop_lag_p99_seconds',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'projection_errors_total',
      'rate_limit_rejections_total',
      'rate_limit_store_fallback',
      'webhook_deliveries_total',
      'webhook_oldest_pending_seconds',
      'webhook_queue_depth',
    ]);
  });
});
