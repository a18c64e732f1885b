import { Kafka, type KafkaConfig, type RetryOptions } from 'kafkajs';
import type { Logger } from 'pino';
import { KAFKAJS_LOG_LEVEL, kafkaLogCreator } from './kafka-logger';
import type { AppenderSettings } from './record-appender';

/**
 * Callers answer HTTP from what a client does (a 503, an outbox retry, the access-log recorder
 * keeping its batch), so a Kafka that is away must fail a request within seconds rather than hang
 * it: short timeouts and two quick retries.
 */
const CLIENT_SETTINGS = {
  connectionTimeout: 1_000,
  requestTimeout: 2_000,
  retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 } satisfies RetryOptions,
};

export interface KafkaClientOptions {
  clientId: string;
  brokers: string[];
  log: Logger;
  /** Overrides for tests (shorter timeouts, another retry). */
  kafka?: Partial<KafkaConfig>;
}

/**
 * The one way this project makes a kafkajs client: its settings, its log through pino, and the
 * producer settings that follow from them (without an explicit retry an idempotent kafkajs producer
 * retries forever). The event log and the access-log stream each make their own, so a stream in
 * trouble never touches the event log's producer.
 */
export function createKafkaClient(options: KafkaClientOptions): { kafka: Kafka; appender: AppenderSettings } {
  const config: KafkaConfig = {
    clientId: options.clientId,
    brokers: options.brokers,
    ...CLIENT_SETTINGS,
    logLevel: KAFKAJS_LOG_LEVEL,
    logCreator: kafkaLogCreator(options.log),
    ...options.kafka,
  };
  return {
    kafka: new Kafka(config),
    appender: { retry: config.retry ?? CLIENT_SETTINGS.retry, ackTimeoutMs: config.requestTimeout ?? CLIENT_SETTINGS.requestTimeout },
  };
}
