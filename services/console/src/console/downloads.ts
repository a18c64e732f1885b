import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Response } from 'express';
import type { Logger } from '@rsd/platform';
import type { ExportStream } from '../credentials-api';

/**
 * A download the credentials API streams, passed on to the browser as it arrives (never held whole in
 * the console), as an attachment named `filename`: a download of any size costs the console a buffer's
 * worth. The browser leaving ends the API's read too; a refusal before the first byte is the console's
 * error page, as any.
 */
export async function passOnDownload(
  res: Response,
  download: { filename: string; what: string; log: Logger; logged: Record<string, unknown> },
  start: (signal: AbortSignal) => Promise<ExportStream>,
): Promise<void> {
  // Nothing is read that no one will take.
  const left = new AbortController();
  res.on('close', () => left.abort());
  const exported = await start(left.signal);
  res.status(200);
  res.setHeader('Content-Type', exported.contentType);
  res.setHeader('Content-Disposition', `attachment; filename="${download.filename}"`);
  download.log.info(download.logged, `console: ${download.what} downloaded`);
  try {
    // Backpressure end to end: the API's body is read only as fast as the browser takes it.
    await pipeline(Readable.fromWeb(exported.body), res);
  } catch (error) {
    // The browser left, or the API's body broke off: the download can only be cut short now.
    if (!left.signal.aborted) download.log.warn({ err: error, ...download.logged }, `console: ${download.what} download cut short`);
    res.destroy();
  }
}

/** An id as part of a file name: letters, digits, `.`, `_` and `-`, the rest `_`. */
export function fileNameOf(id: string, otherwise: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || otherwise;
}
