import { SpanKind, SpanStatusCode, type Attributes, type Tracer } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions';
import type { SendOutcome } from './send-webhook';

/**
 * One delivery attempt as an HTTP CLIENT span (decision 39), named `POST` as the HTTP conventions name
 * a client span without a route. It holds the method, the receiver's host and port, the attempt's
 * number past the first (`http.request.resend_count`) and the answer's status, or what failed: never
 * the URL (its path or query may hold the recipient's own token), the headers (the signature) or the body.
 * A 4xx or 5xx answer, a timeout or a refused target is an error of the attempt; a delivery skipped
 * because the receiver's address is outside its grant's allow list (nothing sent) is not, and says so.
 */
export async function tracedAttempt(
  tracer: Tracer,
  url: string,
  previousAttempts: number,
  send: () => Promise<SendOutcome>,
): Promise<SendOutcome> {
  return tracer.startActiveSpan('POST', { kind: SpanKind.CLIENT, attributes: attemptAttributes(url, previousAttempts) }, async (span) => {
    try {
      const outcome = await send();
      if (outcome.outcome === 'answered') {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, outcome.status);
        if (outcome.status >= 400) {
          span.setAttribute(ATTR_ERROR_TYPE, String(outcome.status));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      } else if (outcome.outcome === 'skipped') {
        // Nothing was sent, by rule: not an error of the attempt.
        span.setAttribute('webhook.skipped', outcome.skipped);
      } else {
        span.setAttribute(ATTR_ERROR_TYPE, outcome.failure);
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      return outcome;
    } finally {
      span.end();
    }
  });
}

function attemptAttributes(url: string, previousAttempts: number): Attributes {
  const attributes: Attributes = { [ATTR_HTTP_REQUEST_METHOD]: 'POST' };
  if (previousAttempts > 0) attributes[ATTR_HTTP_REQUEST_RESEND_COUNT] = previousAttempts;
  if (URL.canParse(url)) {
    const { hostname, port, protocol } = new URL(url);
    attributes[ATTR_SERVER_ADDRESS] = hostname;
    attributes[ATTR_SERVER_PORT] = port === '' ? (protocol === 'https:' ? 443 : 80) : Number(port);
  }
  return attributes;
}
