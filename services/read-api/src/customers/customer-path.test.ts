import { matchCustomerPath } from './customer-resources';

describe('matchCustomerPath', () => {
  test.each([
    ['/rs_abc/score', { resource: 'score', rawClientId: 'rs_abc' }],
    ['/rs_abc/pillars', { resource: 'pillars', rawClientId: 'rs_abc' }],
    ['/rs_abc/score/history', { resource: 'scoreHistory', rawClientId: 'rs_abc' }],
    ['/rs_abc/score/', { resource: 'score', rawClientId: 'rs_abc' }],
    ['/rs%20abc/score', { resource: 'score', rawClientId: 'rs%20abc' }],
    ['//score', { resource: 'score', rawClientId: '' }],
    ['/score', { resource: 'score', rawClientId: undefined }],
    ['/score/', { resource: 'score', rawClientId: undefined }],
    ['/score/history', { resource: 'scoreHistory', rawClientId: undefined }],
    ['/score/history/', { resource: 'scoreHistory', rawClientId: undefined }],
    ['/score/score', { resource: 'score', rawClientId: 'score' }],
    ['/pillars/score/history', { resource: 'scoreHistory', rawClientId: 'pillars' }],
  ])('when the path is %s, then it is %o', (path, expected) => {
    expect(matchCustomerPath(path)).toEqual(expected);
  });

  test.each([
    '/',
    '//',
    '/rs_abc',
    '/rs_abc/',
    '/rs_abc/history',
    '/a/b/score',
    '/rs_abc/score//',
    '/score//',
    '/rs_abc/scores',
    '/rs_abc/score/history/x',
  ])('when the path is %s, then it is no customer resource', (path) => {
    expect(matchCustomerPath(path)).toBeUndefined();
  });
});
