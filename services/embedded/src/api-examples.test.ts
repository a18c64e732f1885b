import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { missingExamples, operationsOf } from '@rsd/api-documents';
import { apiDocuments } from './api-documents';

interface MediaType {
  schema: { $ref?: string };
  examples?: Record<string, { value: unknown }>;
}

/**
 * Every example of a document checked by Ajv (JSON Schema 2020-12, as OpenAPI 3.1 uses; a validator this
 * repository did not write) against the schema of its own media type in that document; the problems, none
 * when every example is valid.
 */
function invalidExamples(service: string, document: object): string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const id = `https://rsd.test/${service}.json`;
  ajv.addSchema({ ...document, $id: id });
  const problems: string[] = [];
  const check = (where: string, content: Record<string, MediaType> | undefined) => {
    for (const [mediaType, media] of Object.entries(content ?? {})) {
      const validate = media.schema.$ref ? ajv.getSchema(`${id}${media.schema.$ref}`) : ajv.compile(media.schema);
      for (const [name, example] of Object.entries(media.examples ?? {})) {
        if (!validate) problems.push(`${where} ${mediaType}: no schema ${media.schema.$ref}`);
        else if (!validate(example.value)) {
          const errors = (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ''}`).join('; ');
          problems.push(`${service}: ${where} ${mediaType} example ${name}: ${errors}`);
        }
      }
    }
  };
  for (const [name, operation] of operationsOf(document)) {
    check(`${name} request`, operation.requestBody?.content);
    for (const [status, response] of Object.entries(operation.responses)) check(`${name} ${status}`, response.content);
  }
  return problems;
}

describe("the OpenAPI documents' examples (decision 57)", () => {
  const documents = apiDocuments();

  test('when the documents are built, then every request and response body of every operation and webhook has an example, in each media type', () => {
    const missing = Object.entries(documents).flatMap(([service, document]) =>
      missingExamples(document).map((where) => `${service}: ${where}`),
    );

    expect(missing).toEqual([]);
    expect(Object.keys(documents)).toEqual(['read-api', 'credentials', 'score-ingest', 'notifier', 'console']);
  });

  test('when an operation has lost an example, then it is named', () => {
    const document = structuredClone(documents['score-ingest']) as {
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, MediaType> }> }>>;
    };
    delete document.paths['/scores']!.post!.responses['202']!.content['application/json']!.examples;

    expect(missingExamples(document)).toEqual(['post /scores 202 application/json']);
  });

  test.each(Object.keys(documents))(
    "when the %s document's examples are checked by Ajv against their own schemas, then each is valid",
    (service) => {
      expect(invalidExamples(service, documents[service]!)).toEqual([]);
    },
  );

  test('when an example breaks its schema, then Ajv says where', () => {
    const document = structuredClone(documents['read-api']) as {
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, MediaType> }> }>>;
    };
    const media = document.paths['/customers/{clientId}/score']!.get!.responses['200']!.content['application/json']!;
    media.examples = { broken: { value: { ...(Object.values(media.examples ?? {})[0]?.value as object), score: 101 } } };

    expect(invalidExamples('read-api', document)).toEqual([
      'read-api: get /customers/{clientId}/score 200 application/json example broken: /score must be <= 100',
    ]);
  });

  test('when an error response names codes, then its examples are those codes, each with the status that code has', () => {
    const document = documents['read-api'] as {
      paths: Record<string, Record<string, { responses: Record<string, { content: Record<string, MediaType> }> }>>;
    };
    const unauthorized = document.paths['/customers/{clientId}/score']!.get!.responses['401']!.content['application/json']!.examples!;

    expect(Object.keys(unauthorized)).toEqual(['MISSING_API_KEY', 'INVALID_API_KEY', 'CREDENTIAL_INACTIVE']);
    expect(unauthorized.INVALID_API_KEY!.value).toMatchObject({ error: 'Unauthorized', code: 'INVALID_API_KEY' });
  });
});
