import type { Webhook, Webhooks } from '@resilience-score/client';
import {
  createWebhookRequestSchema,
  MAX_SECRET_OVERLAP_SECONDS,
  updateWebhookRequestSchema,
  RECIPIENT_WEBHOOK_EVENT_TYPES,
  type WebhookConditions,
} from '@rsd/contracts';
import { UsageError } from './score-file';
import { assertWebhookSecret, startWebhookListener } from './webhook-listener';

/** The options `rsd webhooks …` reads, by their names on the command line. */
export interface WebhooksOptions {
  'client-id'?: string;
  /** The organization, for its alert webhooks. */
  org?: string;
  url?: string;
  events?: string;
  id?: string;
  port?: string;
  host?: string;
  secret?: string;
  fail?: string;
  /** update: `true` or `false`. */
  enabled?: string;
  /** create and update: the conditions on score.updated, or (update) none of them. */
  'score-below'?: string;
  'score-drop-at-least'?: string;
  'grade-changed'?: boolean;
  'every-change'?: boolean;
  /** rotate-secret: a duration (90s, 30m, 1h, 1d) or whole seconds. */
  overlap?: string;
  'overlap-seconds'?: string;
  /** redeliver: the delivery's `webhook-id`. */
  'message-id'?: string;
}

export interface WebhooksContext {
  /** The SDK's webhooks of one grant (the notifier, with the grant's key or its account's). */
  webhooksOf: (ownerId: string) => Webhooks<string> | Promise<Webhooks<string>>;
  /**
   * Whose webhooks: a grant's (`--client-id`, the default) or an organization's alert webhooks (`--org`),
   * with the events that owner may subscribe to (a grant's by default).
   */
  owner?: { option: 'client-id' | 'org'; events: readonly string[] };
  env: Record<string, string | undefined>;
  /** Resolves when `listen` should stop: on SIGINT or SIGTERM in the CLI. */
  untilStopped: () => Promise<unknown>;
  /** One line for stdout (a delivery) and one for stderr (a note to the user). */
  out: (line: string) => void;
  note: (line: string) => void;
  /** `--overlap`'s reading: 90s, 30m, 1h, 1d or whole seconds. */
  secondsOf: (value: string, option: string) => number;
}

/** What `list` notes on stderr for a disabled webhook: why, and the command that brings it back. */
function disabledNote(webhook: Pick<Webhook<string>, 'id' | 'disabledReason'>, option: string): string {
  const reason = webhook.disabledReason ?? 'delivery_failures';
  const enable = `rsd ${option === 'org' ? 'alert-webhooks' : 'webhooks'} enable --${option} … --id ${webhook.id}`;
  switch (reason) {
    case 'key_ended':
      return `rsd: webhook ${webhook.id} is disabled (key_ended): the key that made it was cut off by a rotation without overlap; ${enable} --url URL sets its URL again`;
    case 'key_leaked':
      return `rsd: webhook ${webhook.id} is disabled (key_leaked): a key of its grant or account was reported leaked; check its URL, then ${enable} --url URL`;
    default:
      return `rsd: webhook ${webhook.id} is disabled (delivery_failures): its deliveries failed for a day; ${enable} once its receiver answers`;
  }
}

/** A secret rotation's overlap when none is given: a day, the most the API allows, as for the CLI's other rotations. */
const DEFAULT_SECRET_OVERLAP_SECONDS = MAX_SECRET_OVERLAP_SECONDS;

const DEFAULT_LISTEN_HOST = '127.0.0.1';

/** `rsd webhooks SUBCOMMAND`: what to print on stdout, or undefined for nothing. */
export async function runWebhooksCommand(subcommand: string, options: WebhooksOptions, context: WebhooksContext): Promise<unknown> {
  const required = (name: Exclude<keyof WebhooksOptions, 'grade-changed' | 'every-change'>): string => {
    const value = options[name];
    if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
    return value;
  };
  const owner = context.owner ?? { option: 'client-id', events: RECIPIENT_WEBHOOK_EVENT_TYPES };
  const webhooks = async () => context.webhooksOf(required(owner.option));

  switch (subcommand) {
    case 'create': {
      const ownerId = required(owner.option);
      const body = createRequest(required('url'), eventsOf(required('events'), owner.events), conditionsOf(options, 'create'));
      const created = await (
        await context.webhooksOf(ownerId)
      ).create(body.url, body.events, body.conditions ? { conditions: body.conditions } : {});
      context.note(
        'rsd: the secret is shown only this once; keep it now (the notifier cannot show it again; rsd webhooks listen reads it from RSD_WEBHOOK_SECRET)',
      );
      return created;
    }
    case 'list': {
      const listed = await (await webhooks()).list();
      // Decision 50: a disabled webhook says why, and how it comes back.
      for (const webhook of listed) if (webhook.status === 'disabled') context.note(disabledNote(webhook, owner.option));
      return { webhooks: listed };
    }
    case 'deliveries': {
      const id = required('id');
      return { deliveries: await (await webhooks()).deliveries(id) };
    }
    case 'delete': {
      const id = required('id');
      await (await webhooks()).delete(id);
      context.note(`rsd: webhook ${required('id')} deleted`);
      return undefined;
    }
    case 'update': {
      const id = required('id');
      return (await webhooks()).update(id, changeOf(options, owner.events));
    }
    case 'pause':
    case 'enable': {
      const id = required('id');
      // One disabled for its key (decision 50) comes back only with its URL set again: `enable --url`.
      const url = subcommand === 'enable' && options.url ? { url: options.url } : {};
      const changed = await (await webhooks()).update(id, { enabled: subcommand === 'enable', ...url });
      context.note(
        subcommand === 'enable'
          ? `rsd: webhook ${id} enabled: deliveries resume from now (what happened while it was off is not sent)`
          : `rsd: webhook ${id} paused: nothing is delivered until rsd webhooks enable`,
      );
      return changed;
    }
    case 'rotate-secret': {
      const id = required('id');
      const overlapSeconds = overlapOf(options, context);
      const secret = await (await webhooks()).rotateSecret(id, { overlapSeconds });
      context.note(
        'rsd: the new secret is shown only this once; keep it now. ' +
          (overlapSeconds > 0
            ? `For ${overlapSeconds} s each delivery is signed with the previous secret too, so receivers can change over meanwhile.`
            : 'The previous secret no longer signs anything.'),
      );
      return { secret };
    }
    case 'test': {
      const id = required('id');
      const messageId = await (await webhooks()).test(id);
      context.note(`rsd: a webhook.test delivery is on its way, webhook-id ${messageId}`);
      return { messageId };
    }
    case 'redeliver': {
      const id = required('id');
      const messageId = await (await webhooks()).redeliver(id, required('message-id'));
      context.note(`rsd: delivery ${messageId} is sent again, with its payload and webhook-id`);
      return { messageId };
    }
    case 'listen':
      return listen(options, context);
    default:
      throw new UsageError(`unknown command: webhooks ${subcommand}`);
  }
}

/** Checked against the API's own schema first, so that a mistyped event is a usage error that names the right ones. */
function createRequest(url: string, events: string[], conditions: WebhookConditions | undefined) {
  const body = { url, events, ...(conditions ? { conditions } : {}) };
  const parsed = createWebhookRequestSchema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw new UsageError(usageOf(parsed.error.issues));
}

/** The events this owner may subscribe to, or a usage error that names them. */
function eventsOf(events: string, allowed: readonly string[]): string[] {
  const listed = events
    .split(',')
    .map((event) => event.trim())
    .filter(Boolean);
  const unknown = listed.filter((event) => !allowed.includes(event));
  if (unknown.length > 0 || listed.length === 0) {
    throw new UsageError(
      `--events: ${unknown.length > 0 ? `no event ${unknown.map((event) => `"${event}"`).join(', ')}` : 'none given'}; the events are ${allowed.join(', ')}`,
    );
  }
  return listed;
}

/** The API's names of a request's fields, as the options that set them. */
const OPTION_OF: Record<string, string> = {
  url: '--url',
  events: '--events',
  enabled: '--enabled',
  conditions: 'conditions',
  scoreBelow: '--score-below',
  scoreDropAtLeast: '--score-drop-at-least',
  gradeChanged: '--grade-changed',
};

function usageOf(issues: readonly { path: readonly PropertyKey[]; message: string }[]): string {
  return issues
    .map((issue) => {
      const field = issue.path.findLast((part) => typeof part === 'string');
      return `${OPTION_OF[String(field)] ?? `--${String(field ?? 'events')}`}: ${issue.message}`;
    })
    .join('\n');
}

/**
 * `--score-below N`, `--score-drop-at-least N`, `--grade-changed` (a change is delivered when any given
 * holds); for update, `--every-change` removes them all. Undefined when none is given: unchanged.
 */
function conditionsOf(options: WebhooksOptions, command: 'create' | 'update'): WebhookConditions | undefined {
  const below = wholeNumber('score-below', options['score-below']);
  const drop = wholeNumber('score-drop-at-least', options['score-drop-at-least']);
  const conditions: WebhookConditions = {
    ...(below === undefined ? {} : { scoreBelow: below }),
    ...(drop === undefined ? {} : { scoreDropAtLeast: drop }),
    ...(options['grade-changed'] ? { gradeChanged: true as const } : {}),
  };
  if (options['every-change']) {
    if (command === 'create')
      throw new UsageError('--every-change is for update: a new webhook hears every change unless given conditions');
    if (Object.keys(conditions).length > 0) {
      throw new UsageError(
        '--every-change removes the conditions: give it alone, or --score-below, --score-drop-at-least, --grade-changed',
      );
    }
    return {};
  }
  return Object.keys(conditions).length > 0 ? conditions : undefined;
}

/** update's PATCH: only what is given changes; checked against the API's own schema first. */
function changeOf(options: WebhooksOptions, allowed: readonly string[]) {
  const enabled = options.enabled;
  if (enabled !== undefined && enabled !== 'true' && enabled !== 'false') {
    throw new UsageError(`--enabled must be true or false (got "${enabled}"); rsd webhooks pause and enable do the same`);
  }
  const conditions = conditionsOf(options, 'update');
  const change = {
    ...(options.url === undefined ? {} : { url: options.url }),
    ...(options.events === undefined ? {} : { events: eventsOf(options.events, allowed) }),
    ...(enabled === undefined ? {} : { enabled: enabled === 'true' }),
    ...(conditions === undefined ? {} : { conditions }),
  };
  if (Object.keys(change).length === 0) {
    throw new UsageError(
      'update needs at least one of --url, --events, --enabled, --score-below, --score-drop-at-least, --grade-changed, --every-change',
    );
  }
  const parsed = updateWebhookRequestSchema.safeParse(change);
  if (parsed.success) return parsed.data;
  throw new UsageError(usageOf(parsed.error.issues));
}

function overlapOf(options: WebhooksOptions, context: WebhooksContext): number {
  if (options.overlap !== undefined && options['overlap-seconds'] !== undefined) {
    throw new UsageError('--overlap and --overlap-seconds say the same: give one');
  }
  const seconds =
    options.overlap !== undefined
      ? context.secondsOf(options.overlap, '--overlap')
      : (wholeNumber('overlap-seconds', options['overlap-seconds']) ?? DEFAULT_SECRET_OVERLAP_SECONDS);
  if (seconds > MAX_SECRET_OVERLAP_SECONDS) {
    throw new UsageError(`the overlap is at most ${MAX_SECRET_OVERLAP_SECONDS} s (1d) (got ${seconds} s)`);
  }
  return seconds;
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
