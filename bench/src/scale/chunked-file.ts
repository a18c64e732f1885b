import { open, type FileHandle } from 'node:fs/promises';

/** Text gathered until this much is pending, then written at once: few system calls, bounded memory. */
const CHUNK_CHARS = 4 * 1024 * 1024;

/** A file written as a stream of small strings, never held whole in memory (one can be several GB). */
export class ChunkedFile {
  private pending: string[] = [];
  private pendingChars = 0;
  /** Bytes written so far. */
  bytes = 0;

  private constructor(private readonly handle: FileHandle) {}

  static async create(path: string): Promise<ChunkedFile> {
    return new ChunkedFile(await open(path, 'w', 0o600));
  }

  async write(text: string): Promise<void> {
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= CHUNK_CHARS) await this.flush();
  }

  /** Synced too, so that no write-back of the data set runs into the product's first start. */
  async close(): Promise<void> {
    await this.flush();
    await this.handle.sync();
    await this.handle.close();
  }

  private async flush(): Promise<void> {
    const chunk = Buffer.from(this.pending.join(''));
    this.pending = [];
    this.pendingChars = 0;
    // A write may take less than it was given (a full disk, a signal): go on from where it stopped.
    for (let at = 0; at < chunk.length;) at += (await this.handle.write(chunk, at)).bytesWritten;
    this.bytes += chunk.length;
  }
}
