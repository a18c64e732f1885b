import type { RequestHandler } from 'express';

/** What a page may load besides its own origin's files, directive by directive (each `'self'` already). */
export interface PageAllowances {
  /** `img-src` beyond `'self'`: `data:` for a stylesheet's inline icons. */
  images?: readonly string[];
}

/**
 * One Content-Security-Policy for every HTML page of every service (the console, the claim pages,
 * each service's `/docs`): scripts, styles, images and requests from this origin only, no plugin,
 * no inline script or style, forms only to this origin, no `<base>`, and never inside a frame
 * (`frame-ancestors 'none'`, with X-Frame-Options for browsers that predate it). A page that needs
 * more says exactly what (`allowances`), nothing more.
 */
export function contentSecurityPolicy(allowances: PageAllowances = {}): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    ['img-src', "'self'", ...(allowances.images ?? [])].join(' '),
    "connect-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/**
 * The headers of every page: the policy above, X-Frame-Options DENY, `Referrer-Policy: same-origin`
 * (not no-referrer: with it a browser sends `Origin: null` on the page's own forms, and the
 * console's origin check needs the real one) and `Cross-Origin-Opener-Policy: same-origin` (no
 * window another site opened keeps a handle on it). Set before the route answers, so its error
 * pages carry them too.
 */
export function pageHeaders(allowances: PageAllowances = {}): RequestHandler {
  const policy = contentSecurityPolicy(allowances);
  return (_req, res, next) => {
    res.setHeader('Content-Security-Policy', policy);
    res.setHeader('X-Frame-Options', 'DENY');
    res.setHeader('Referrer-Policy', 'same-origin');
    res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
    next();
  };
}
