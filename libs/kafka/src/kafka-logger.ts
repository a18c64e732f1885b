import { logLevel, type logCreator } from 'kafkajs';
import type { Logger } from 'pino';

/** kafkajs produces INFO and above; DEBUG entries are never built. */
export const KAFKAJS_LOG_LEVEL = logLevel.INFO;

/**
 * Warnings about trade-offs this adapter makes on purpose: bounded producer retries keep `append`
 * prompt, and a producer whose send failed is replaced (see record-appender.ts).
 */
const DELIBERATE = new Set(['Limiting retries for the idempotent producer may invalidate EoS guarantees']);

/**
 * Broker answers that kafkajs retries (or this adapter handles) while a cluster starts, a group's
 * coordinator loads or moves, or a leader is elected. Keyed by kafkajs's error type, in its words
 * (kafkajs/src/protocol/error.js); the test checks them against the installed kafkajs.
 */
export const TRANSIENT_BROKER_ERRORS = {
  GROUP_LOAD_IN_PROGRESS: "The coordinator is loading and hence can't process requests for this group",
  GROUP_COORDINATOR_NOT_AVAILABLE: 'The group coordinator is not available',
  NOT_COORDINATOR_FOR_GROUP: 'This is not the correct coordinator for this group',
  REBALANCE_IN_PROGRESS: 'The group is rebalancing, so a rejoin is needed',
  UNKNOWN_MEMBER_ID: 'The coordinator is not aware of this member',
  ILLEGAL_GENERATION: 'Specified group generation id is not valid',
  LEADER_NOT_AVAILABLE: 'There is no leader for this topic-partition as we are in the middle of a leadership election',
  // Right after a topic is created, before its leader hosts it; a topic that is really missing
  // fails the start with UnknownTopicError (topic-admin.ts), never only this line.
  UNKNOWN_TOPIC_OR_PARTITION: 'This server does not host this topic-partition',
  NOT_LEADER_FOR_PARTITION: 'This server is not the leader for that topic-partition',
  NOT_CONTROLLER: 'This is not the correct controller for this cluster',
  TOPIC_ALREADY_EXISTS: 'Topic with this name already exists',
  NETWORK_EXCEPTION: 'The server disconnected before a response was received',
  FENCED_LEADER_EPOCH: 'The leader epoch in the request is older than the epoch on the broker',
  UNKNOWN_LEADER_EPOCH: 'The leader epoch in the request is newer than the epoch on the broker',
} as const;

/** A connection that failed, timed out or was closed by the broker: kafkajs dials again (kafkajs/src/network/connection.js). */
const CONNECTION_TEXTS = ['Connection error: ', 'Connection timeout', 'Closed connection'];

/**
 * kafkajs's own words for a cluster that is starting, restarting or failing over: no coordinator
 * found yet (until `__consumer_offsets` is loaded; the subscription restarts its consumer after it,
 * see kafka-subscription.ts), no broker reachable, a broker or leader missing from stale metadata
 * (kafkajs/src/cluster, kafkajs/src/errors.js).
 */
const CLUSTER_STATE_TEXTS = [
  'Failed to find group coordinator',
  'No broker available',
  'No brokers in the broker pool',
  'not found in the cached metadata',
  'Could not find the leader for the partition',
];

const TRANSIENT_TEXTS: readonly string[] = [...Object.values(TRANSIENT_BROKER_ERRORS), ...CONNECTION_TEXTS, ...CLUSTER_STATE_TEXTS];

/**
 * kafkajs logs these at ERROR although it recovers from them itself, so they are warnings here: an
 * error line should mean an error. A state that lasts still shows: /readyz fails and appends answer 503.
 */
function isTransient(message: string, fields: Record<string, unknown>): boolean {
  // kafkajs restarts a crashed consumer; the "Crash: …" line before it carries the cause and its level.
  if (message.startsWith('Restarting the consumer in ')) return true;
  // A CreateTopics answer names no reason here. Two replicas creating the same topic is the common
  // case (createTopics then resolves false); any other reason fails ensureTopics, and the start with it.
  if (message.startsWith('Response CreateTopics(') && fields.error === 'Topic creation errors') return true;
  // A broker's answer names its error in `error`; elsewhere `error` can come from a handler, which is not kafkajs's to retry.
  const texts = message.startsWith('Response ') && typeof fields.error === 'string' ? [message, fields.error] : [message];
  return texts.some((text) => TRANSIENT_TEXTS.some((transient) => text.includes(transient)));
}

/** While a transient state lasts, its line once per this interval (with how many were held back), not once per retry. */
const TRANSIENT_LOG_INTERVAL_MS = 30_000;

/**
 * Per service logger, so the pacing outlives one Kafka client: a service waiting for its broker
 * makes a new client per start-up attempt, each dialling three times, and would otherwise write
 * two lines per dial for as long as the broker is away.
 */
const pacing = new WeakMap<Logger, Map<string, { loggedAt: number; held: number }>>();

function paced(log: Logger, key: string, now: number): { show: boolean; held: number } {
  let lines = pacing.get(log);
  if (!lines) {
    lines = new Map<string, { loggedAt: number; held: number }>();
    pacing.set(log, lines);
  }
  const line = lines.get(key);
  if (line && now - line.loggedAt < TRANSIENT_LOG_INTERVAL_MS) {
    line.held += 1;
    return { show: false, held: line.held };
  }
  if (lines.size >= 1_000) lines.clear();
  lines.set(key, { loggedAt: now, held: 0 });
  return { show: true, held: line?.held ?? 0 };
}

/**
 * Routes kafkajs's own log lines into the service's pino logger. kafkajs narrates every join,
 * commit and reconnect at INFO, so INFO becomes pino debug and only WARN and ERROR stay visible;
 * an ERROR about a state kafkajs recovers from becomes a warning, written once per 30 s while it
 * repeats (the repeats go to debug, and the next warning says how many there were).
 */
export function kafkaLogCreator(log: Logger, now: () => number = Date.now): logCreator {
  const kafkaLog = log.child({ component: 'kafkajs' });
  return () =>
    ({ namespace, level, log: entry }) => {
      const { message, timestamp: _timestamp, logger: _logger, ...fields } = entry;
      const context = { namespace, ...fields };
      if (level === logLevel.ERROR && !isTransient(message, fields)) {
        kafkaLog.error(context, message);
      } else if (level === logLevel.ERROR) {
        const { show, held } = paced(log, `${namespace} ${message}`, now());
        if (!show) kafkaLog.debug(context, message);
        else if (held > 0) kafkaLog.warn({ ...context, repeatedSinceLastWarning: held }, message);
        else kafkaLog.warn(context, message);
      } else if (level === logLevel.WARN && !DELIBERATE.has(message)) {
        kafkaLog.warn(context, message);
      } else {
        kafkaLog.debug(context, message);
      }
    };
}
