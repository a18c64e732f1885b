export interface WelcomeInput {
  readApiUrl: string;
  credentialsUrl: string;
  scoreIngestUrl: string;
  notifierUrl: string;
  consoleUrl: string;
  organizationId: string;
  /** The console's one-time sign-in link for the demo organization. */
  consoleSignInUrl: string;
  token: string | undefined;
  firstStart: boolean;
}

/** What a newcomer needs to go from `npm start` to a score read, printed once on first start. */
export function welcomeText(input: WelcomeInput): string {
  const { readApiUrl, credentialsUrl, scoreIngestUrl, notifierUrl, consoleUrl, organizationId, token } = input;
  const lines = [
    '',
    'Resilience Score Data API (embedded runtime) is running:',
    `  read API       ${readApiUrl}/v1   docs ${readApiUrl}/docs`,
    `  credentials    ${credentialsUrl}/v1   docs ${credentialsUrl}/docs`,
    `  score ingest   ${scoreIngestUrl}/v1   docs ${scoreIngestUrl}/docs`,
    `  notifier       ${notifierUrl}/v1   docs ${notifierUrl}/docs`,
    `  console        ${consoleUrl}/console`,
    '',
    `Console for organization "${organizationId}": open this one-time sign-in link within 10 minutes`,
    `(it works once; restart for another):`,
    '',
    `  ${input.consoleSignInUrl}`,
  ];
  if (!input.firstStart || !token) {
    lines.push('', 'Mint a development token with: npx rsd token --org <organizationId>', '');
    return lines.join('\n');
  }
  lines.push(
    '',
    `A development token for organization "${organizationId}" (valid 12 h; more with: npx rsd token --org <id>):`,
    '',
    `  export TOKEN=${token}`,
    '',
    '1. Create an authorization (the API key is shown this once):',
    '',
    `  curl -s -X POST ${credentialsUrl}/v1/organizations/${organizationId}/authorizations \\`,
    '    -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \\',
    `    -d '{"recipientType":"insurance_provider","recipientName":"Example Insurance","scopes":["qr_score","pillar_breakdown"]}'`,
    '',
    '  export CLIENT_ID=<clientId from the answer>  API_KEY=<apiKey from the answer>',
    '',
    '2. Post a score as a scoring engine would:',
    '',
    `  curl -s -X POST ${scoreIngestUrl}/v1/scores \\`,
    '    -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" \\',
    `    -d '{"organizationId":"${organizationId}","scoreDate":"${new Date().toISOString().slice(0, 10)}","score":72,"grade":"Strengthen","pillarScores":{"structuralIntegrity":70,"failureResistance":75,"deviceHealth":68,"recoveryCapability":77}}'`,
    '',
    '3. Read it as the recipient:',
    '',
    `  curl -s ${readApiUrl}/v1/customers/$CLIENT_ID/score -H "x-api-key: $API_KEY"`,
    `  curl -s ${readApiUrl}/v1/customers/$CLIENT_ID/pillars -H "x-api-key: $API_KEY"`,
    '',
    'Or with the CLI: npx rsd --help',
    '',
  );
  return lines.join('\n');
}
