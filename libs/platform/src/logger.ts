import pino, { type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

/**
 * Secrets never reach a log: the key header, bearer tokens and any `apiKey` field are censored
 * wherever they appear in a logged object.
 */
export const REDACTED_PATHS = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  'apiKey',
  '*.apiKey',
  '*.*.apiKey',
  'token',
  '*.token',
];

export function createLogger(service: string, level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      name: service,
      level,
      base: { service },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
