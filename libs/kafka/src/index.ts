export { openKafkaEventLog, type KafkaEventLog, type KafkaEventLogOptions } from './kafka-event-log';
export { UnknownTopicError, type TopicSettings } from './topic-admin';
export { openKafkaAccessLog, type KafkaAccessLogOptions, type KafkaAccessLogPublisher } from './kafka-access-log';
export { createKafkaClient, type KafkaClientOptions } from './kafka-client';
export {
  rewriteTopic,
  STAGING_SUFFIX,
  type TopicRewriteJournal,
  type TopicRewriteOptions,
  type TopicRewriteReport,
  type TopicRewriteState,
} from './topic-rewrite';
