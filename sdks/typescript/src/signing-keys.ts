import { errorFor } from './errors.js';
import { signingKeyId, verifyEvidence } from './signature.js';
import type { RequestOptions, Transport } from './transport.js';
import type { Evidence, Jwks } from './types.js';

/** The read API's published keys, fetched when first needed and again when a signature names a key they lack. */
export class SigningKeys {
  readonly #transport: Transport;
  readonly #url: string;
  #jwks: Promise<Jwks> | undefined;

  /** `baseUrl`: the read API's versioned root, without a trailing slash. */
  constructor(transport: Transport, baseUrl: string) {
    this.#transport = transport;
    // Public, and outside the versioned root: https://api.example.com/.well-known/jwks.json, asked without the key.
    this.#url = `${baseUrl.replace(/\/v\d+$/, '')}/.well-known/jwks.json`;
  }

  /** getSigningKeys, fetched now; also what is verified with from now on. */
  async fetch(call: RequestOptions): Promise<Jwks> {
    const fetched = (this.#jwks = this.#fetch(call));
    return structuredClone(await fetched);
  }

  /** The cached JWKS (fetched when none is), for what is verified against it besides responses: a certificate's JWS. */
  async current(call: RequestOptions): Promise<Jwks> {
    return structuredClone(await (this.#jwks ??= this.#fetch(call)));
  }

  /** Against the cached JWKS, fetched again once when the signature names a key it does not hold (a key change). */
  async verify(evidence: Evidence, call: RequestOptions): Promise<void> {
    let jwks = await (this.#jwks ??= this.#fetch(call));
    const kid = signingKeyId(evidence);
    if (kid !== undefined && !jwks.keys.some((key) => key.kid === kid)) jwks = await (this.#jwks = this.#fetch(call));
    verifyEvidence(evidence, jwks);
  }

  #fetch(call: RequestOptions): Promise<Jwks> {
    const fetched = this.#transport.send({ method: 'GET', url: this.#url, headers: {}, idempotent: true }, call).then((received) => {
      if (received.status !== 200) throw errorFor(received.status, received.headers, received.body);
      return JSON.parse(new TextDecoder().decode(received.body)) as Jwks;
    });
    // A failed fetch is not kept: the next verification tries again.
    fetched.catch(() => {
      if (this.#jwks === fetched) this.#jwks = undefined;
    });
    return fetched;
  }
}

/** What a signed resource or page was received as: kept so that it can be verified again later. */
export function evidenceOf(received: { status: number; path: string; headers: Headers; body: Uint8Array }): Evidence {
  return { status: received.status, path: received.path, headers: Object.fromEntries(received.headers), body: received.body };
}
