import { configuredSubjectKeysMasterKey, type BackupCommandContext } from './backup';

/**
 * `rsd seal-log --data-dir DIR` (decision 56): the embedded log's events written before sealing,
 * rewritten sealed, with the product stopped. The work is @rsd/embedded's (seal-log.ts), loaded only
 * by this command; the report goes to stdout, the progress to stderr. A refusal (the product running,
 * no master key) is an error (exit 1).
 */
export async function runSealLogCommand(options: { 'data-dir'?: string | undefined }, context: BackupCommandContext): Promise<unknown> {
  const dataDir = options['data-dir'] ?? context.env.DATA_DIR ?? '.data';
  const { sealEmbeddedLog } = await import('@rsd/embedded');
  const configured = await configuredSubjectKeysMasterKey(context.env);
  let shown = 0;
  const report = await sealEmbeddedLog({
    dataDir,
    ...(configured ? { configuredSubjectKeysMasterKey: configured } : {}),
    // A line a second at most: a large log's batches would otherwise flood the terminal.
    progress: (line) => {
      if (Date.now() - shown < 1_000 && !line.includes('VACUUM')) return;
      shown = Date.now();
      context.note(line);
    },
  });
  if (report.unsealable.length > 0) {
    context.note(
      `rsd: ${report.unsealable.length} record(s) name no subject for the fields they hold and stay in clear (${report.unsealable.join(', ')}): ` +
        'see "Events written before sealing" in docs/operators/data-protection.md.',
    );
  }
  return report;
}
