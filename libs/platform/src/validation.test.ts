import { z } from 'zod';
import { issueDetails, pathOf, requestErrorMap, validationFailed } from './validation';

describe('request validation details', () => {
  const schema = z.strictObject({ name: z.string(), kind: z.enum(['a', 'b']), items: z.array(z.int()) });

  test('when fields are missing, then each is reported as required', () => {
    const result = schema.safeParse({}, { error: requestErrorMap });

    expect(issueDetails(result.error?.issues ?? [])).toEqual([
      { path: 'name', message: 'is required' },
      { path: 'kind', message: 'is required' },
      { path: 'items', message: 'is required' },
    ]);
  });

  test('when there are unknown fields and nested problems, then each has its own dotted path', () => {
    const result = schema.safeParse({ name: 'x', kind: 'a', items: [1, 'two'], extra: 1, more: 2 }, { error: requestErrorMap });

    expect(issueDetails(result.error?.issues ?? []).map((detail) => detail.path)).toEqual(['items.1', 'extra', 'more']);
  });

  test('when the path is the root, then it is the empty string', () => {
    expect(pathOf([])).toBe('');
  });

  test('when a validation error is built, then it is a 400 VALIDATION_FAILED carrying the details', () => {
    const error = validationFailed([{ path: 'name', message: 'is required' }]);

    expect([error.status, error.code, error.details]).toEqual([400, 'VALIDATION_FAILED', [{ path: 'name', message: 'is required' }]]);
  });
});
