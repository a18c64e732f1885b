/**
 * `Date.prototype.toISOString`, formatted once per millisecond: a busy service stamps many log lines
 * and records with the same instant, and formatting a date each time was over 1 % of a read's CPU
 * (issue 27's profile).
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
