/**
 * `Date.prototype.toISOString`, formatted once per millisecond: a busy service stamps many log lines
 * and records with the same instant, so one formatting serves them all instead of one per line.
 */
export function isoInstants(): (epochMs: number) => string {
  let formattedAt = Number.NaN;
  let formatted = '';
  return (epochMs) => {
    if (epochMs !== formattedAt) {
      formattedAt = epochMs;
      formatted = new Date(epochMs).toISOString();
    }
    return formatted;
  };
}
