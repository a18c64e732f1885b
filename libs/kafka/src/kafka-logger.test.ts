import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import { logLevel } from 'kafkajs';
import pino from 'pino';
import { kafkaLogCreator, TRANSIENT_BROKER_ERRORS } from './kafka-logger';

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'debug' }, destination), lines };
}

/** A line kafkajs logs at ERROR. */
const anErrorEntry = (namespace: string, message: string, fields: Record<string, unknown> = {}) => ({
  namespace,
  level: logLevel.ERROR,
  label: 'ERROR',
  log: { timestamp: 'now', message, ...fields },
});

/** A kafkajs log line at ERROR, as its namespace, message and fields. */
type ErrorLine = [namespace: string, message: string, fields: Record<string, unknown>];

/** How kafkajs logs a broker's error answer to a request. */
const aFailedResponse = (request: string, error: string): ErrorLine => ['Connection', `Response ${request}`, { error }];

describe('kafkaLogCreator', () => {
  it('when kafkajs logs, then ERROR and WARN keep their level, INFO becomes debug, and fields are kept', () => {
    const { log, lines } = capturingLogger();
    const write = kafkaLogCreator(log)(logLevel.INFO);
    const entry = (level: logLevel, message: string) => ({
      namespace: 'Consumer',
      level,
      label: 'x',
      log: { timestamp: 'now', logger: 'kafkajs', message, groupId: 'g' },
    });

    write(entry(logLevel.ERROR, 'crashed'));
    write(entry(logLevel.WARN, 'rebalancing'));
    write(entry(logLevel.INFO, 'joined'));

    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([
      [50, 'crashed'],
      [40, 'rebalancing'],
      [20, 'joined'],
    ]);
    expect(lines[0]).toMatchObject({ component: 'kafkajs', namespace: 'Consumer', groupId: 'g' });
    expect(lines[0]).not.toHaveProperty('timestamp');
  });

  it('when kafkajs warns about bounded idempotent retries, then it is logged at debug: the adapter chose that on purpose', () => {
    const { log, lines } = capturingLogger();
    const write = kafkaLogCreator(log)(logLevel.INFO);

    write({
      namespace: 'Producer',
      level: logLevel.WARN,
      label: 'WARN',
      log: { timestamp: 'now', message: 'Limiting retries for the idempotent producer may invalidate EoS guarantees' },
    });

    expect(lines.map(({ level }) => level)).toEqual([20]);
  });

  // Entries as kafkajs 2.2.4 writes them (seen against a local broker, or built from its source).
  const transient: ErrorLine[] = [
    aFailedResponse('GroupCoordinator(key: 10, version: 2)', 'The group coordinator is not available'),
    aFailedResponse('JoinGroup(key: 11, version: 5)', "The coordinator is loading and hence can't process requests for this group"),
    aFailedResponse('OffsetCommit(key: 8, version: 5)', 'This is not the correct coordinator for this group'),
    aFailedResponse('Heartbeat(key: 12, version: 3)', 'The group is rebalancing, so a rejoin is needed'),
    aFailedResponse('CreateTopics(key: 19, version: 3)', 'Topic creation errors'),
    aFailedResponse('Metadata(key: 3, version: 6)', TRANSIENT_BROKER_ERRORS.LEADER_NOT_AVAILABLE),
    ['Connection', 'Connection error: connect ECONNREFUSED 127.0.0.1:19092', { broker: '127.0.0.1:19092' }],
    ['Connection', 'Connection timeout', { broker: '127.0.0.1:19092' }],
    ['BrokerPool', 'Failed to connect to seed broker, trying another broker from the list: Connection error: connect ECONNREFUSED', {}],
    ['Runner', 'The coordinator is not aware of this member, re-joining the group', { groupId: 'g' }],
    ['Producer', `Failed to send messages: ${TRANSIENT_BROKER_ERRORS.NOT_LEADER_FOR_PARTITION}`, { retryCount: 0 }],
    ['Consumer', 'Crash: KafkaJSNumberOfRetriesExceeded: The group coordinator is not available', { groupId: 'g' }],
    ['Consumer', 'Crash: KafkaJSConnectionClosedError: Closed connection', { groupId: 'g' }],
    ['Consumer', 'Crash: KafkaJSGroupCoordinatorNotFound: Failed to find group coordinator', { groupId: 'g' }],
    ['Consumer', 'Crash: KafkaJSNoBrokerAvailableError: No broker available', { groupId: 'g' }],
    ['Consumer', 'Crash: KafkaJSBrokerNotFound: Broker 1 not found in the cached metadata', { groupId: 'g' }],
    ['Consumer', 'Restarting the consumer in 300ms', { groupId: 'g' }],
  ];

  it.each(transient)('when kafkajs logs the transient %s error "%s", then it is a warning', (namespace, message, fields) => {
    const { log, lines } = capturingLogger();
    kafkaLogCreator(log)(logLevel.INFO)(anErrorEntry(namespace, message, fields));

    expect(lines.map(({ level, msg }) => [level, msg])).toEqual([[40, message]]);
    expect(lines[0]).toMatchObject({ component: 'kafkajs', namespace, ...fields });
  });

  it('when the same transient line repeats, then it is a warning once per 30 s and says how many were held back', () => {
    const { log, lines } = capturingLogger();
    let now = 0;
    const write = kafkaLogCreator(log, () => now)(logLevel.INFO);
    const refused = () => write(anErrorEntry('Connection', 'Connection error: connect ECONNREFUSED 127.0.0.1:19092'));

    refused();
    now = 1_000;
    refused();
    now = 29_000;
    refused();
    now = 31_000;
    refused();

    expect(lines.map(({ level, repeatedSinceLastWarning }) => [level, repeatedSinceLastWarning])).toEqual([
      [40, undefined],
      [20, undefined],
      [20, undefined],
      [40, 2],
    ]);
  });

  it('when a second Kafka client logs on the same service logger, then the pacing carries over', () => {
    const { log, lines } = capturingLogger();
    const entry = anErrorEntry('BrokerPool', 'Connection timeout');

    kafkaLogCreator(log, () => 0)(logLevel.INFO)(entry);
    kafkaLogCreator(log, () => 5_000)(logLevel.INFO)(entry);

    expect(lines.map(({ level }) => level)).toEqual([40, 20]);
  });

  const errors: ErrorLine[] = [
    aFailedResponse('Produce(key: 0, version: 7)', 'Messages are rejected since there are fewer in-sync replicas than required'),
    aFailedResponse('SaslAuthenticate(key: 36, version: 1)', 'Authentication failed'),
    ['Consumer', 'Crash: KafkaJSNonRetriableError: Cannot assign to read only property', { groupId: 'g' }],
    ['Runner', 'Error when calling eachMessage', { error: 'Connection error: the read views are unreachable' }],
    ['Producer', 'The request timed out', { retryCount: 2 }],
  ];

  it.each(errors)('when kafkajs logs the %s error "%s", then it stays an error', (namespace, message, fields) => {
    const { log, lines } = capturingLogger();
    kafkaLogCreator(log)(logLevel.INFO)(anErrorEntry(namespace, message, fields));

    expect(lines.map(({ level }) => level)).toEqual([50]);
  });

  it('when kafkajs is upgraded, then the transient texts are still its own, type for type', () => {
    // Test-only look into kafkajs's error table: the texts above must keep matching what it logs.
    const { errorCodes } = createRequire(__filename)('kafkajs/src/protocol/error') as { errorCodes: { type: string; message: string }[] };
    const installed = Object.fromEntries(errorCodes.map(({ type, message }) => [type, message]));

    for (const [type, message] of Object.entries(TRANSIENT_BROKER_ERRORS)) expect([type, installed[type]]).toEqual([type, message]);
  });
});
