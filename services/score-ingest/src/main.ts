import { runMain } from '@rsd/platform';
import { runServices } from '@rsd/runtime';
import { scoreIngestService } from './service';

/**
 * The score-ingest service on the distributed runtime; it listens at once and waits for Kafka.
 */
runMain(async () => {
  await runServices([scoreIngestService], { name: 'score-ingest', env: process.env });
});
