import { request } from '@rsd/testkit';

/** One answer the SDK got, as the suites record it from their fetch. */
export interface Answer {
  url: URL;
  method: string;
  status: number;
  /** The JSON body, when there is one. */
  body: unknown;
}

interface Schema {
  $ref?: string;
  properties?: Record<string, unknown>;
  required?: string[];
}
interface Operation {
  operationId: string;
  responses: Record<string, { content?: { 'application/json'?: { schema: Schema } } }>;
}
interface Document {
  servers: { url: string }[];
  paths: Record<string, { servers?: { url: string }[] } & Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** What the services' own OpenAPI documents say of the answers a suite got. */
export interface DocumentedAnswers {
  /** Each answer whose status is undocumented, or whose body has a field undocumented or lacks a required one. */
  problems(answers: readonly Answer[]): string[];
  /** The operations the answers were to (undefined for a path no document has). */
  operationIds(answers: readonly Answer[]): Set<string | undefined>;
}

/** Fetches each origin's `/v1/openapi.json` and holds answers against the one of their origin. */
export async function documentedAnswers(origins: readonly string[]): Promise<DocumentedAnswers> {
  const documents = new Map<string, Document>();
  for (const origin of origins) documents.set(origin, (await request<Document>(`${origin}/v1/openapi.json`)).body);
  const find = ({ url, method }: Answer): { document: Document; operation: Operation } | undefined => {
    const document = documents.get(url.origin)!;
    for (const [template, item] of Object.entries(document.paths)) {
      const base = (item.servers ?? document.servers)[0]!.url.replace(/\/$/, '');
      const pattern = new RegExp(`^${base}${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (pattern.test(url.pathname) && item[method.toLowerCase()]) return { document, operation: item[method.toLowerCase()]! };
    }
    return undefined;
  };
  const problemsOf = (answer: Answer): string[] => {
    const found = find(answer);
    const response = found?.operation.responses[String(answer.status)];
    if (!found || !response) return ['status not documented'];
    let schema = response.content?.['application/json']?.schema;
    if (schema?.$ref) schema = found.document.components.schemas[schema.$ref.split('/').pop()!];
    if (!schema?.properties || typeof answer.body !== 'object' || answer.body === null) return [];
    const fields = Object.keys(answer.body);
    return [
      ...fields.filter((field) => !(field in schema.properties!)).map((field) => `field ${field} not documented`),
      ...(schema.required ?? []).filter((field) => !fields.includes(field)).map((field) => `required field ${field} missing`),
    ];
  };
  return {
    problems: (answers) =>
      answers.flatMap((answer) =>
        problemsOf(answer).map((problem) => `${answer.method} ${answer.url.pathname} ${answer.status}: ${problem}`),
      ),
    operationIds: (answers) => new Set(answers.map((answer) => find(answer)?.operation.operationId)),
  };
}

/**
 * A suite's last test, in its describe block `the OpenAPI documents`: every answer it recorded (but the documents' own, and those `mine` leaves out) held against the
 * documents `origins` serve, each documented, and the operations they were to exactly `operations`.
 */
export function everyAnswerDocumented(
  what: string,
  recorded: { answered: readonly Answer[]; origins: () => string[]; mine?: (answer: Answer) => boolean },
  operations: readonly string[],
): void {
  describe('the OpenAPI documents', () => {
    test(`when every answer ${what} got is held against its service document, then its status and fields are documented, for every operation it calls`, async () => {
      const documented = await documentedAnswers(recorded.origins());
      const answers = recorded.answered.filter(
        (answer) => !answer.url.pathname.endsWith('/openapi.json') && (recorded.mine?.(answer) ?? true),
      );

      expect(documented.problems(answers)).toEqual([]);
      expect([...documented.operationIds(answers)].sort()).toEqual([...operations].sort());
    });
  });
}
