import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { REPO_ROOT } from './embedded-process';

/** Decision 40's files: the alerting rules, their promtool tests, the PrometheusRule made of them, the dashboard. */
export const MONITORING_FILES = {
  rules: 'deploy/monitoring/alerts.rules.yml',
  ruleTests: 'deploy/monitoring/alerts.test.yml',
  prometheusRule: 'k8s/overlays/production/prometheus-rules.yaml',
  dashboard: 'deploy/monitoring/grafana-dashboard.json',
} as const;

export interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleGroup {
  name: string;
  rules: Rule[];
}

export interface DashboardTarget {
  expr?: string;
  refId?: string;
  datasource?: { type?: string; uid?: string };
}

export interface DashboardPanel {
  id: number;
  type: string;
  title: string;
  datasource?: { type?: string; uid?: string };
  gridPos: { h: number; w: number; x: number; y: number };
  targets?: DashboardTarget[];
  panels?: DashboardPanel[];
}

export interface Dashboard {
  schemaVersion: number;
  uid: string;
  title: string;
  templating: { list: { name: string; type: string; query?: string | { query: string }; definition?: string }[] };
  panels: DashboardPanel[];
}

export function readRepoFile(path: string): string {
  return readFileSync(join(REPO_ROOT, path), 'utf8');
}

export function ruleGroups(): RuleGroup[] {
  return (parse(readRepoFile(MONITORING_FILES.rules)) as { groups: RuleGroup[] }).groups;
}

export function alertingRules(): (Rule & { alert: string })[] {
  return ruleGroups().flatMap((group) => group.rules.filter((rule): rule is Rule & { alert: string } => typeof rule.alert === 'string'));
}

export function dashboard(): Dashboard {
  return JSON.parse(readRepoFile(MONITORING_FILES.dashboard)) as Dashboard;
}

/** Every panel, those inside collapsed rows included. */
export function dashboardPanels(board: Dashboard = dashboard()): DashboardPanel[] {
  return board.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** The PromQL of the dashboard: every target's expression and every query variable's query. */
export function dashboardQueries(board: Dashboard = dashboard()): string[] {
  const targets = dashboardPanels(board).flatMap((panel) => (panel.targets ?? []).map((target) => target.expr ?? ''));
  const variables = board.templating.list
    .filter((variable) => variable.type === 'query')
    .map((variable) => (typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '')));
  return [...targets, ...variables].filter((query) => query.trim() !== '');
}

// PromQL's aggregations and functions are followed by `(`; these words are not, and are not metrics.
const KEYWORDS = new Set(['and', 'or', 'unless', 'offset', 'bool', 'atan2', 'inf', 'nan', 'start', 'end']);
// Followed by a list of label names in parentheses.
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);

type Token = { kind: 'ident'; text: string } | { kind: 'matchers'; text: string } | { kind: 'punct'; text: string };

/** PromQL (and Grafana's `$variables`) as identifiers, label-matcher blocks and punctuation; strings, numbers, durations and ranges dropped. */
function tokens(query: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  const readQuoted = (at: number): number => {
    const quote = query[at];
    let j = at + 1;
    while (j < query.length && query[j] !== quote) j += query[j] === '\\' && quote !== '`' ? 2 : 1;
    return j + 1;
  };
  while (i < query.length) {
    const c = query[i]!;
    if (/\s/.test(c)) i += 1;
    else if (c === '"' || c === "'" || c === '`') i = readQuoted(i);
    else if (c === '#') while (i < query.length && query[i] !== '\n') i += 1;
    else if (c === '{') {
      let j = i + 1;
      while (j < query.length && query[j] !== '}') j = query[j] === '"' || query[j] === "'" || query[j] === '`' ? readQuoted(j) : j + 1;
      out.push({ kind: 'matchers', text: query.slice(i + 1, j) });
      i = j + 1;
    } else if (c === '[') i = query.indexOf(']', i) + 1 || query.length;
    else if (c === '$') i += /^\$(\{[^}]*\}|\w+)/.exec(query.slice(i))?.[0].length ?? 1;
    else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(query[i + 1] ?? '')))
      i += /^[0-9.]+(e[+-]?[0-9]+)?[a-z]*/i.exec(query.slice(i))![0].length;
    else if (/[a-zA-Z_:]/.test(c)) {
      const text = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(query.slice(i))![0];
      out.push({ kind: 'ident', text });
      i += text.length;
    } else {
      out.push({ kind: 'punct', text: c });
      i += 1;
    }
  }
  return out;
}

/** The `service` a selector's matchers require exactly (`service="read-api"`), if any. */
function requiredService(matchers: string): string | undefined {
  return /(?:^|,)\s*service\s*=\s*"([^"]*)"/.exec(matchers)?.[1];
}

/**
 * The metric names a PromQL expression reads, each with the services its selectors require (an empty
 * set: any service). Identifiers followed by `(` are functions or aggregations, those after by,
 * without, on, ignoring, group_left and group_right are label lists, and PromQL's keywords are not
 * metrics; strings, numbers, durations, ranges and Grafana's `$variables` are skipped. A Grafana
 * `label_values(selector, label)` query reads the selector's metric.
 */
export function metricNamesIn(query: string): Map<string, Set<string>> {
  const labelValues = /^\s*label_values\s*\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$/s.exec(query);
  const expression = labelValues ? labelValues[1]! : /^\s*label_values\s*\(/.test(query) ? '' : query;
  const found = new Map<string, Set<string>>();
  const add = (name: string, matchers: string | undefined) => {
    const services = found.get(name) ?? new Set<string>();
    const service = matchers === undefined ? undefined : requiredService(matchers);
    if (service !== undefined) services.add(service);
    found.set(name, services);
  };
  const list = tokens(expression);
  for (let i = 0; i < list.length; i += 1) {
    const token = list[i]!;
    const next = list[i + 1];
    if (token.kind === 'matchers') {
      // A selector without a name before its braces: {__name__="metric"}.
      const named = /__name__\s*=\s*"([^"]+)"/.exec(token.text)?.[1];
      if (named && list[i - 1]?.kind !== 'ident') add(named, token.text);
      continue;
    }
    if (token.kind !== 'ident') continue;
    if (LABEL_LISTS.has(token.text)) {
      if (next?.text === '(') {
        let depth = 0;
        for (i += 1; i < list.length; i += 1) {
          if (list[i]!.text === '(') depth += 1;
          if (list[i]!.text === ')' && --depth === 0) break;
        }
      }
      continue;
    }
    // A function or an aggregation: `rate(`, `sum(`, `sum by (…) (`.
    if (KEYWORDS.has(token.text) || next?.text === '(' || (next?.kind === 'ident' && LABEL_LISTS.has(next.text))) continue;
    add(token.text, next?.kind === 'matchers' ? next.text : undefined);
  }
  return found;
}

/** Every metric the rules and the dashboard read, with the services their selectors require. */
export function metricsUsedByMonitoring(): Map<string, Set<string>> {
  const used = new Map<string, Set<string>>();
  const queries = [...alertingRules().map((rule) => rule.expr), ...dashboardQueries()];
  for (const query of queries) {
    for (const [name, services] of metricNamesIn(query)) used.set(name, new Set([...(used.get(name) ?? []), ...services]));
  }
  return used;
}

/** The metric families an exposition declares (`# TYPE name type`), registered ones without samples included. */
export function exportedFamilies(exposition: string): Map<string, string> {
  const families = new Map<string, string>();
  for (const match of exposition.matchAll(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/gm)) families.set(match[1]!, match[2]!);
  return families;
}

/** Whether a series name belongs to a family: itself, or a histogram's _bucket, _sum or _count, a summary's _sum or _count. */
function declares(families: Map<string, string>, name: string): boolean {
  if (families.has(name)) return true;
  const suffix = /^(.+)_(bucket|sum|count)$/.exec(name);
  if (!suffix) return false;
  const type = families.get(suffix[1]!);
  return type === 'histogram' || (type === 'summary' && suffix[2] !== 'bucket');
}

/**
 * What the rules and the dashboard read that the services do not export: `metric` when no service
 * declares it, `metric on service` when a selector requires that service and it does not.
 */
export function metricsNotExported(used: Map<string, Set<string>>, expositions: Record<string, string>): string[] {
  const families = Object.fromEntries(Object.entries(expositions).map(([service, text]) => [service, exportedFamilies(text)]));
  const missing: string[] = [];
  for (const [name, services] of used) {
    if (services.size === 0) {
      if (!Object.values(families).some((declared) => declares(declared, name))) missing.push(name);
      continue;
    }
    for (const service of services) {
      const declared = families[service];
      if (!declared) missing.push(`${name} on ${service} (not scraped)`);
      else if (!declares(declared, name)) missing.push(`${name} on ${service}`);
    }
  }
  return missing.sort();
}
