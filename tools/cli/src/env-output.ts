/**
 * `--env`: a created credential or webhook as `export NAME='value'` lines, for `eval "$(rsd … --env)"`,
 * so a script (the README's walkthrough) takes the secret straight into its environment instead of
 * copying it from the screen. Values are single-quoted for the shell.
 */
export function exportsOf(record: unknown, names: Record<string, string>): string {
  const fields = typeof record === 'object' && record !== null ? (record as Record<string, unknown>) : {};
  return Object.entries(names)
    .filter(([field]) => typeof fields[field] === 'string')
    .map(([field, name]) => `export ${name}=${shellQuoted(String(fields[field]))}`)
    .join('\n');
}

function shellQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** What `--env` exports for each command that creates a secret. */
export const CREDENTIAL_EXPORTS = { clientId: 'CLIENT_ID', apiKey: 'RSD_API_KEY' };
export const WEBHOOK_EXPORTS = { id: 'WEBHOOK_ID', secret: 'RSD_WEBHOOK_SECRET' };
/** Decision 42: a claim into a portfolio; the account key (a new account's) becomes the key `rsd portfolio` reads with. */
export const ACCOUNT_EXPORTS = { accountId: 'RSD_ACCOUNT_ID', accountKey: 'RSD_API_KEY', clientId: 'CLIENT_ID' };

/** A claim link (decision 38): the Client ID and the link, which the organization sends to its recipient. */
export const CLAIM_LINK_EXPORTS = { clientId: 'CLIENT_ID', claimUrl: 'RSD_CLAIM_URL' };

export function claimLinkExportsOf(record: unknown): string {
  const fields = typeof record === 'object' && record !== null ? (record as { clientId?: unknown; claim?: { url?: unknown } }) : {};
  return exportsOf({ clientId: fields.clientId, claimUrl: fields.claim?.url }, CLAIM_LINK_EXPORTS);
}
