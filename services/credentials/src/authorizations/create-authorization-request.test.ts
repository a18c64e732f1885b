import { SHOWN_NAME_REFUSAL } from '@rsd/contracts';
import { ApiError } from '@rsd/platform';
import { thrownBy } from '@rsd/testkit';
import { validateCreateRequest } from './create-authorization-request';

const NOW = new Date('2026-11-20T10:00:00.000Z');

function problemsOf(body: unknown): unknown {
  const { code, details } = thrownBy(() => validateCreateRequest(body, NOW), ApiError);
  return { code, details };
}

describe('create authorization request', () => {
  test('when the request is valid, then the expiry is normalised and a missing name becomes null', () => {
    expect(validateCreateRequest({ recipientType: 'partner', scopes: ['score_trend'], expiresAt: '2026-11-20' }, NOW)).toEqual({
      recipientType: 'partner',
      recipientName: null,
      scopes: ['score_trend'],
      expiresAt: '2026-11-21T00:00:00.000Z',
      allowedCidrs: null,
      keyDelivery: 'response',
      claimValidSeconds: 259_200,
      recipientAccountId: null,
    });
  });

  test('when the name has surrounding blanks, then they are trimmed', () => {
    expect(validateCreateRequest({ recipientType: 'partner', recipientName: '  Globex  ', scopes: ['qr_score'] }, NOW).recipientName).toBe(
      'Globex',
    );
  });

  test('when the name holds a control or format character (a NUL byte, a newline, a right-to-left override), then it is refused, naming the field', () => {
    for (const recipientName of ['Acme\u0000Corp', 'Acme\nCorp', 'Acme\u001b[31m', 'Acme\u202Ekcab', 'Ac\u200Bme']) {
      expect(problemsOf({ recipientType: 'partner', recipientName, scopes: ['qr_score'] })).toEqual({
        code: 'VALIDATION_FAILED',
        details: [{ path: 'recipientName', message: SHOWN_NAME_REFUSAL }],
      });
    }
  });

  test('when the expiry is malformed, then the message says what to send', () => {
    expect(problemsOf({ recipientType: 'partner', scopes: ['qr_score'], expiresAt: '01/12/2026' })).toEqual({
      code: 'VALIDATION_FAILED',
      details: [{ path: 'expiresAt', message: expect.stringContaining('YYYY-MM-DD') }],
    });
  });

  test('when fields are missing, then each is reported as required', () => {
    expect(problemsOf({})).toEqual({
      code: 'VALIDATION_FAILED',
      details: [
        { path: 'recipientType', message: 'is required' },
        { path: 'scopes', message: 'is required' },
      ],
    });
  });

  test('when other fields are wrong and the expiry is past, then the past expiry is reported too', () => {
    expect(problemsOf({ recipientType: 'bank', scopes: ['qr_score'], expiresAt: '2026-11-19' })).toEqual({
      code: 'VALIDATION_FAILED',
      details: [
        { path: 'recipientType', message: expect.any(String) },
        { path: 'expiresAt', message: 'must be in the future' },
      ],
    });
  });
});

describe('create authorization request: key delivery (decision 38)', () => {
  test('when claimValidSeconds comes without keyDelivery "claimLink", then it is refused: it would mean nothing', () => {
    expect(() => validateCreateRequest({ recipientType: 'partner', scopes: ['qr_score'], claimValidSeconds: 3600 }, NOW)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED', details: [expect.objectContaining({ path: 'claimValidSeconds' })] }),
    );
  });

  test('when keyDelivery is unknown, then it is refused', () => {
    expect(() => validateCreateRequest({ recipientType: 'partner', scopes: ['qr_score'], keyDelivery: 'email' }, NOW)).toThrow(
      expect.objectContaining({ code: 'VALIDATION_FAILED' }),
    );
  });
});
