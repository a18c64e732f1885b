import { readFile, readdir, stat } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

/** Linux reports CPU time in clock ticks; USER_HZ is 100 on every architecture Node supports. */
const TICKS_PER_SECOND = 100;

/** User plus system CPU time of a process so far, in ms (/proc/<pid>/stat fields 14 and 15). */
export async function cpuMsOf(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name in parentheses may hold spaces: count fields from after its closing one.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/** Resident memory now and its peak so far (VmRSS, VmHWM), in MB. */
export async function memoryOf(pid: number): Promise<{ rssMb: number; peakMb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/** Bytes of every file under a directory (the data directory after the product has had it). */
export async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await bytesUnder(path);
    else if (entry.isFile()) total += (await stat(path)).size;
  }
  return total;
}

/** Cores, CPU model and memory, for the heading: the figures mean little without them. */
export async function machine(): Promise<string> {
  let model = cpus()[0]?.model ?? 'unknown CPU';
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(await readFile('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // Not Linux: os.cpus() said it.
  }
  return `${cpus().length} cores, ${model}, ${(totalmem() / 2 ** 30).toFixed(0)} GB RAM`;
}
