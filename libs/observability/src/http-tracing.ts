import type { RequestListener } from 'node:http';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_SCHEME,
  HTTP_REQUEST_METHOD_VALUE_OTHER,
} from '@opentelemetry/semantic-conventions';
import type { Express, Request, Response } from 'express';
import { routeOf } from './operations';

// The HTTP semantic conventions' known methods; any other is `_OTHER`, never the caller's text.
const METHODS = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE']);

/**
 * One server span per request (decision 39), around the whole app: it continues the caller's W3C
 * `traceparent` or starts a trace, and is named by the route's template once the app has matched it —
 * the label the metrics use (`routeOf`), never the raw path, which can hold a Client ID or a claim
 * link's token. Its attributes are the method, the route template and the status: no header value, no
 * query string, no path. The request runs in the span's context, so its log lines carry the trace's ids.
 *
 * The runner wraps an app only when tracing is on: with it off, a request costs nothing here.
 */
export function tracedRequests(app: RequestListener, tracer: Tracer): RequestListener {
  const traced: RequestListener = (req, res) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const method = req.method !== undefined && METHODS.has(req.method) ? req.method : HTTP_REQUEST_METHOD_VALUE_OTHER;
    const span = tracer.startSpan(
      method,
      { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: method, [ATTR_URL_SCHEME]: 'http' } },
      parent,
    );
    const active = trace.setSpan(parent, span);
    // A body's chunks and the response's events come from the socket, outside the request's async
    // context: bound, their listeners (the body parser, the access log) run in the span's.
    context.bind(active, req);
    context.bind(active, res);
    res.once('close', () => {
      // An app that never ran (the process stopping) left no locals, and so no route.
      const route = (res as Partial<Response>).locals === undefined ? 'unmatched' : routeOf(req as Request, res as Response);
      if (route !== 'unmatched') {
        span.updateName(`${method} ${route}`);
        span.setAttribute(ATTR_HTTP_ROUTE, route);
      }
      if (res.headersSent) {
        span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
        if (res.statusCode >= 500) {
          span.setAttribute(ATTR_ERROR_TYPE, String(res.statusCode));
          span.setStatus({ code: SpanStatusCode.ERROR });
        }
      }
      span.end();
    });
    context.with(active, () => app(req, res));
  };
  // The app's own request and response (express's), so that the server makes its messages with them
  // as it would for the app unwrapped (libs/platform's `listen`).
  const { request, response } = app as Partial<Pick<Express, 'request' | 'response'>>;
  return Object.assign(traced, { request, response });
}

/**
 * The W3C trace context of the span this code runs in, as headers for a call to another service, so that
 * the callee's span joins the caller's trace (the console's calls to the credentials API). Empty when
 * tracing is off: the global propagator is then a no-op.
 */
export function traceContextHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}
