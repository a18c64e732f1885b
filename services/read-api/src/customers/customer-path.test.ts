import { matchCustomerPath } from './customer-resources';

describe('matchCustomerPath', () => {
  test.each([
    ['/v1/customers/rs_abc/score', { resource: 'score', rawClientId: 'rs_abc' }],
    ['/v1/customers/rs_abc/pillars', { resource: 'pillars', rawClientId: 'rs_abc' }],
    ['/v1/customers/rs_abc/score/history', { resource: 'scoreHistory', rawClientId: 'rs_abc' }],
    ['/v1/customers/rs_abc/score/', { resource: 'score', rawClientId: 'rs_abc' }],
    ['/v1/customers/rs%20abc/score', { resource: 'score', rawClientId: 'rs%20abc' }],
    ['/v1/customers//score', { resource: 'score', rawClientId: '' }],
    ['/v1/customers/score', { resource: 'score', rawClientId: undefined }],
    ['/v1/customers/score/', { resource: 'score', rawClientId: undefined }],
    ['/v1/customers/score/history', { resource: 'scoreHistory', rawClientId: undefined }],
    ['/v1/customers/score/history/', { resource: 'scoreHistory', rawClientId: undefined }],
    ['/v1/customers/score/score', { resource: 'score', rawClientId: 'score' }],
    ['/v1/customers/pillars/score/history', { resource: 'scoreHistory', rawClientId: 'pillars' }],
    // As express matched the path it mounted the resources at; below it, the case is the contract's.
    ['/V1/Customers/rs_abc/score', { resource: 'score', rawClientId: 'rs_abc' }],
  ])('when the path is %s, then it is %o', (path, expected) => {
    expect(matchCustomerPath(path)).toEqual(expected);
  });

  test.each([
    '/v1/customers',
    '/v1/customers/',
    '/v1/customers//',
    '/v1/customers/rs_abc',
    '/v1/customers/rs_abc/',
    '/v1/customers/rs_abc/history',
    '/v1/customers/a/b/score',
    '/v1/customers/rs_abc/score//',
    '/v1/customers/score//',
    '/v1/customers/rs_abc/scores',
    '/v1/customers/rs_abc/score/history/x',
    '/v1/customersx/rs_abc/score',
    '/v2/customers/rs_abc/score',
    '/rs_abc/score',
    '/v1/portfolio/rs_abc/score',
    '/v1/customers/rs_abc/Score',
  ])('when the path is %s, then it is no customer resource', (path) => {
    expect(matchCustomerPath(path)).toBeUndefined();
  });
});
