import type { ErrorRequestHandler, RequestHandler, Response, Router } from 'express';
import type { Logger } from 'pino';
import { UnavailableError } from './unavailable';
import { loggedUrlOf, requestIdOf } from './access-log';
import { ApiError, CODES_NOT_SENT, errorBody, type ErrorCode } from './errors';
import { serviceUnavailable } from './service-unavailable';

/**
 * Unknown paths: a JSON 404, never express's HTML page. A path that is not valid percent-encoding
 * names no resource at all: it is the 400 every service answers for one (malformedPath).
 */
export const routeNotFound: RequestHandler = (req, _res, next) => {
  next(
    hasMalformedPercentEncoding(req.path) ? malformedPath() : new ApiError('ROUTE_NOT_FOUND', `No resource at ${req.method} ${req.path}`),
  );
};

/**
 * True when `text` holds a `%` that is not followed by two hexadecimal digits, or escapes that do
 * not decode to UTF-8 (`%FF`, a truncated `%E0%A4%A`): what decodeURIComponent throws a URIError for.
 */
export function hasMalformedPercentEncoding(text: string): boolean {
  if (!text.includes('%')) return false;
  try {
    decodeURIComponent(text);
    return false;
  } catch {
    return true;
  }
}

/** A path segment as received, percent-decoded; a malformed one is the documented 400, never a URIError (a 500). */
export function decodePathSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    return decodeURIComponent(segment);
  } catch {
    throw malformedPath();
  }
}

/**
 * Every service's answer to a path that is not valid percent-encoding, whichever part holds it
 * (a parameter express decodes, one a route decodes itself, or a path no route has): 400
 * VALIDATION_FAILED naming the path. Only the Client ID of a recipient's path keeps the read API's
 * own answer, INVALID_CLIENT_ID (its format check, step 3 of the order of checks).
 */
export function malformedPath(): ApiError {
  return new ApiError('VALIDATION_FAILED', 'The path is not valid percent-encoding', [
    { path: 'path', message: 'must be percent-encoded UTF-8: each % followed by two hexadecimal digits, the bytes decoding to UTF-8' },
  ]);
}

/** For `.all()` after a route's handlers: a 405 that names the methods the path does accept. */
export function methodNotAllowed(allowed: readonly string[]): RequestHandler {
  const allow = allowed.join(', ');
  return (req, _res, next) => {
    next(new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use ${allow}`, undefined, { Allow: allow }));
  };
}

/**
 * Every route the router declares answers the methods it has no handler for with `methodNotAllowed`,
 * its own methods in the Allow header (HEAD with GET, which answers it). Called once the routes are declared.
 */
export function answerOtherMethods<R extends Router>(router: R): R {
  for (const route of router.stack.flatMap((layer) => (layer.route ? [layer.route] : []))) {
    const declared = route.stack.flatMap((layer): string[] => (typeof layer.method === 'string' ? [layer.method.toUpperCase()] : []));
    const allowed = [...new Set(declared.flatMap((method) => (method === 'GET' ? ['GET', 'HEAD'] : [method])))];
    route.all(methodNotAllowed(allowed));
  }
  return router;
}

/** body-parser's error types, mapped to the documented codes. */
function fromBodyParser(error: { type?: unknown; status?: unknown; errno?: unknown }): ApiError | undefined {
  switch (error.type) {
    case 'entity.too.large':
    case 'parameters.too.many':
      return new ApiError('PAYLOAD_TOO_LARGE', 'The request body is larger than this endpoint accepts');
    case 'entity.parse.failed':
      return new ApiError('MALFORMED_JSON', 'The request body is not valid JSON');
    case 'entity.verify.failed':
      return new ApiError('MALFORMED_JSON', 'The request body is not valid UTF-8');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON encoded as UTF-8');
    case 'request.aborted':
    case 'request.size.invalid':
    case 'stream.encoding.set':
    case 'querystring.parse.rangeError':
      return new ApiError('MALFORMED_JSON', 'The request body could not be read');
    default:
      // A body that does not decompress as its Content-Encoding (gzip, deflate, br) says: zlib's own
      // error, which body-parser passes on with status 400 and no type.
      return error.status === 400 && typeof error.errno === 'number'
        ? new ApiError('MALFORMED_JSON', 'The request body could not be decompressed as its Content-Encoding says')
        : undefined;
  }
}

/** Express decodes path parameters before any handler runs; one that is not percent-encoded UTF-8 (`%FF`) fails there. */
function fromRouter(error: object): ApiError | undefined {
  return error instanceof URIError && (error as { status?: unknown }).status === 400 ? malformedPath() : undefined;
}

/** The code the error middleware answered with, for whatever looks at the response once it is finished (the read API's access log). */
export function errorCodeOf(res: Response): string | undefined {
  const code: unknown = res.locals.errorCode;
  return typeof code === 'string' ? code : undefined;
}

/**
 * What a route group that answers people rather than programs (the console, the claim page) sets
 * for the same errors: its own words and its page. Status, code and headers stay the middleware's.
 */
export interface ErrorAnswers {
  /**
   * Wording by code for the errors the middleware names itself (the router's and the body parsers'
   * refusals, an outage, a defect); an ApiError a handler threw keeps its own message.
   */
  messages?: Partial<Record<ErrorCode, string>>;
  /** The HTML page to answer with instead of the JSON error body; undefined leaves this request to the JSON body. */
  page?: (error: ApiError, res: Response) => string | undefined;
}

/**
 * The one error middleware, for every service and route group: typed errors become their documented
 * body (or the route group's page); anything else is logged with its cause and answered with a bare
 * 500, so no internals ever reach a client.
 */
export function errorHandler(log: Logger, answers: ErrorAnswers = {}): ErrorRequestHandler {
  const { messages = {}, page } = answers;
  return (error: unknown, req, res, next) => {
    if (res.headersSent) {
      next(error);
      return;
    }
    const known =
      error instanceof ApiError
        ? error
        : typeof error === 'object' && error !== null
          ? (fromRouter(error) ?? fromBodyParser(error))
          : undefined;
    const unavailable = error instanceof UnavailableError;
    const named = known ?? (unavailable ? serviceUnavailable() : new ApiError('INTERNAL_ERROR', 'An unexpected error occurred'));
    const apiError = named === error ? named : inWords(named, messages[named.code]);
    // A route whose path holds a secret (a claim link's token) names what to log instead.
    const path = loggedUrlOf(res) ?? req.path;
    // An outage is already alerted on by readiness and the dependency's own metrics: one warning per request is enough.
    if (unavailable) log.warn({ err: error, method: req.method, path }, 'dependency unreachable');
    else if (!known) log.error({ err: error, method: req.method, path }, 'unhandled error');
    res.locals.errorCode = apiError.code;
    // A 429's and a 503's Retry-After among them: every 503 is made by serviceUnavailable(), which gives it one.
    for (const [name, value] of Object.entries(apiError.headers ?? {})) res.setHeader(name, value);
    res.status(apiError.status);
    const html = page?.(apiError, res);
    if (html !== undefined) {
      res.type('html').send(html);
      return;
    }
    res.json(
      errorBody(apiError.status, CODES_NOT_SENT.has(apiError.code) ? undefined : apiError.code, apiError.message, {
        requestId: requestIdOf(res),
        details: apiError.details,
      }),
    );
  };
}

/** The same error in a route group's words, where it has its own for this code. */
function inWords(error: ApiError, message: string | undefined): ApiError {
  return message === undefined ? error : new ApiError(error.code, message, error.details, error.headers);
}
