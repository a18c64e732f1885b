import type { Webhooks } from '@resilience-score/client';
import { createWebhookRequestSchema, WEBHOOK_EVENT_TYPES, webhookEventTypeSchema } from '@rsd/contracts';
import { UsageError } from './score-file';
import { assertWebhookSecret, startWebhookListener } from './webhook-listener';

/** The options `rsd webhooks …` reads, by their names on the command line. */
export interface WebhooksOptions {
  'client-id'?: string;
  url?: string;
  events?: string;
  id?: string;
  port?: string;
  host?: string;
  secret?: string;
  fail?: string;
}

export interface WebhooksContext {
  /** The SDK's webhooks of one grant (the notifier, with the grant's key or its account's). */
  webhooksOf: (clientId: string) => Webhooks;
  env: Record<string, string | undefined>;
  /** Resolves when `listen` should stop: on SIGINT or SIGTERM in the CLI. */
  untilStopped: () => Promise<unknown>;
  /** One line for stdout (a delivery) and one for stderr (a note to the user). */
  out: (line: string) => void;
  note: (line: string) => void;
}

const DEFAULT_LISTEN_HOST = '127.0.0.1';

/** `rsd webhooks SUBCOMMAND`: what to print on stdout, or undefined for nothing. */
export async function runWebhooksCommand(subcommand: string, options: WebhooksOptions, context: WebhooksContext): Promise<unknown> {
  const required = (name: keyof WebhooksOptions): string => {
    const value = options[name];
    if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
    return value;
  };
  const webhooks = () => context.webhooksOf(required('client-id'));

  switch (subcommand) {
    case 'create': {
      const clientId = required('client-id');
      const body = createRequest(required('url'), required('events'));
      const created = await context.webhooksOf(clientId).create(body.url, body.events);
      context.note(
        'rsd: the secret is shown only this once; keep it now (the notifier cannot show it again; rsd webhooks listen reads it from RSD_WEBHOOK_SECRET)',
      );
      return created;
    }
    case 'list':
      return { webhooks: await webhooks().list() };
    case 'deliveries': {
      const id = required('id');
      return { deliveries: await webhooks().deliveries(id) };
    }
    case 'delete': {
      const id = required('id');
      await webhooks().delete(id);
      context.note(`rsd: webhook ${required('id')} deleted`);
      return undefined;
    }
    case 'listen':
      return listen(options, context);
    default:
      throw new UsageError(`unknown command: webhooks ${subcommand}`);
  }
}

/** Checked against the API's own schema first, so that a mistyped event is a usage error that names the right ones. */
function createRequest(url: string, events: string) {
  const body = {
    url,
    events: events
      .split(',')
      .map((event) => event.trim())
      .filter(Boolean),
  };
  const unknown = body.events.filter((event) => !webhookEventTypeSchema.safeParse(event).success);
  if (unknown.length > 0 || body.events.length === 0) {
    throw new UsageError(
      `--events: ${unknown.length > 0 ? `no event ${unknown.map((event) => `"${event}"`).join(', ')}` : 'none given'}; the events are ${WEBHOOK_EVENT_TYPES.join(', ')}`,
    );
  }
  const parsed = createWebhookRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new UsageError(parsed.error.issues.map((issue) => `--${String(issue.path[0] ?? 'events')}: ${issue.message}`).join('\n'));
}

async function listen(options: WebhooksOptions, context: WebhooksContext): Promise<undefined> {
  const port = wholeNumber('port', options.port, 65_535);
  if (port === undefined) throw new UsageError('--port is required');
  const failFirst = wholeNumber('fail', options.fail) ?? 0;
  const secret = options.secret ?? context.env.RSD_WEBHOOK_SECRET;
  if (!secret) throw new UsageError('no webhook secret: set RSD_WEBHOOK_SECRET (or pass --secret)');
  try {
    assertWebhookSecret(secret);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const host = options.host ?? DEFAULT_LISTEN_HOST;

  let listener;
  try {
    listener = await startWebhookListener({
      port,
      host,
      secret,
      failFirst,
      onDelivery: (delivery) => context.out(JSON.stringify(delivery)),
    });
  } catch (error) {
    throw new Error(`cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`);
  }
  context.note(
    `rsd: listening for webhooks on ${listener.url}` +
      (failFirst > 0 ? ` (${failFirst === 1 ? 'the first delivery' : `the first ${failFirst} deliveries`} answered 500)` : '') +
      '; Ctrl-C stops',
  );
  await context.untilStopped();
  await listener.close();
  return undefined;
}

function wholeNumber(name: string, value: string | undefined, max?: number): number | undefined {
  if (value === undefined) return undefined;
  const number = /^\d{1,9}$/.test(value) ? Number(value) : NaN;
  if (Number.isNaN(number) || (max !== undefined && number > max)) {
    throw new UsageError(`--${name} must be a whole number${max !== undefined ? ` from 0 to ${max}` : ''} (got "${value}")`);
  }
  return number;
}
