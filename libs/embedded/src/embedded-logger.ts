/** The part of a pino logger the embedded adapters use; a pino `Logger` fits it as is. */
export interface EmbeddedLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export const silentLogger: EmbeddedLogger = { warn: () => undefined, error: () => undefined };
