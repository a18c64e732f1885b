import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { WebhookDeliveryFailure, WebhookDeliverySkip } from '@rsd/contracts';
import { addressAllowed, checkTargetAddress, checkTargetUrl, type TargetPolicy } from '@rsd/domain';

/** Every address a name resolves to (the system resolver by default; a stub in tests). */
export type Resolve = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export interface SendSettings {
  policy: TargetPolicy;
  timeoutMs: number;
  maxResponseBytes: number;
  resolve?: Resolve;
}

export interface OutgoingWebhook {
  url: string;
  headers: Record<string, string>;
  body: string;
  /**
   * The allow list of the grant whose data it carries (`deliveryAllowList`): the connection is made
   * only to an address inside it, or not at all. Absent or null: any address the policy allows.
   */
  allowedCidrs?: readonly string[] | null | undefined;
}

export type SendOutcome =
  | { outcome: 'answered'; status: number }
  | { outcome: 'failed'; failure: Exclude<WebhookDeliveryFailure, 'response_status'>; reason: string }
  /** Nothing was sent, and nothing will be: not a failure. */
  | { outcome: 'skipped'; skipped: WebhookDeliverySkip; reason: string };

class TargetRefused extends Error {}
class AddressNotAllowed extends Error {}

/**
 * One attempt: a POST that follows no redirect, gives up after `timeoutMs`, reads at most
 * `maxResponseBytes` of the answer, and connects only to addresses decision 28 allows. The check is
 * made on the addresses the connection itself resolves (its `lookup`), so a name that resolved to a
 * public address when the subscription was made and to a private one now (DNS rebinding) is refused
 * at the moment it would be used. If any address of a name is refused, the attempt is.
 *
 * A delivery bounded by a grant's allow list is connected only to the addresses of the name inside
 * it, in the same lookup: an address outside it is passed over, and with none inside the delivery is
 * skipped (nothing sent). What is checked is what the connection uses, whatever the name resolved to before.
 */
export function webhookSender(settings: SendSettings): (webhook: OutgoingWebhook) => Promise<SendOutcome> {
  const resolve = settings.resolve ?? systemResolve;
  const lookupWithin =
    (allowedCidrs: readonly string[] | null): LookupFunction =>
    (hostname, options, callback) => {
      resolve(hostname).then(
        (addresses) => {
          for (const { address } of addresses) {
            const checked = checkTargetAddress(address, settings.policy);
            if (checked.outcome === 'refused') return callback(new TargetRefused(checked.reason), '', 0);
          }
          const usable = allowedCidrs === null ? addresses : addresses.filter(({ address }) => addressAllowed(allowedCidrs, address));
          if (addresses.length > 0 && usable.length === 0) return callback(new AddressNotAllowed(), '', 0);
          const [first] = usable;
          if (!first) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
          if (options.all) return (callback as unknown as (error: null, all: typeof usable) => void)(null, usable);
          return callback(null, first.address, first.family);
        },
        (error: unknown) => callback(error as NodeJS.ErrnoException, '', 0),
      );
    };
  const unbounded = lookupWithin(null);

  return (webhook) => {
    const allowedCidrs = webhook.allowedCidrs ?? null;
    const target = checkTargetUrl(webhook.url, settings.policy);
    if (target.outcome === 'refused') return Promise.resolve(refusedTarget(target.reason));
    if (target.isAddressLiteral) {
      const checked = checkTargetAddress(target.hostname, settings.policy);
      if (checked.outcome === 'refused') return Promise.resolve(refusedTarget(checked.reason));
      if (!addressAllowed(allowedCidrs, target.hostname)) return Promise.resolve(ADDRESS_NOT_ALLOWED);
    }
    const url = new URL(target.href);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<SendOutcome>((done) => {
      // request() itself may throw (an invalid header value): that is a failed attempt like any other.
      const request = client.request(
        url,
        {
          method: 'POST',
          headers: {
            ...webhook.headers,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(webhook.body),
            'user-agent': 'rsd-notifier/1',
          },
          lookup: allowedCidrs === null ? unbounded : lookupWithin(allowedCidrs),
          // A connection per attempt: nothing pooled outlives the address check it was made under.
          agent: false,
          signal: AbortSignal.timeout(settings.timeoutMs),
        },
        (response) => {
          done({ outcome: 'answered', status: response.statusCode ?? 0 });
          // The status is the answer; what follows is read up to the cap and dropped.
          let read = 0;
          response.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > settings.maxResponseBytes) response.destroy();
          });
          response.on('error', () => undefined);
        },
      );
      request.on('error', (error) => done(failureOf(error)));
      request.end(webhook.body);
    });
  };
}

function refusedTarget(reason: string): SendOutcome {
  return { outcome: 'failed', failure: 'target_not_allowed', reason };
}

const ADDRESS_NOT_ALLOWED: SendOutcome = {
  outcome: 'skipped',
  skipped: 'address_not_allowed',
  reason: "the receiver's address is outside the grant's allow list",
};

function failureOf(error: Error): SendOutcome {
  if (error instanceof TargetRefused) return refusedTarget(error.message);
  if (error instanceof AddressNotAllowed) return ADDRESS_NOT_ALLOWED;
  if (error.name === 'AbortError' || error.name === 'TimeoutError') {
    return { outcome: 'failed', failure: 'timeout', reason: 'the target did not answer in time' };
  }
  // The code (ECONNREFUSED, ENOTFOUND, a TLS error) says enough; the message may carry addresses.
  const code = (error as NodeJS.ErrnoException).code ?? 'an error';
  return { outcome: 'failed', failure: 'connection_failed', reason: `the connection failed (${code})` };
}
