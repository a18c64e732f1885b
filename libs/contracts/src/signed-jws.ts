import { z } from 'zod';

/**
 * A signed document as the API answers it (decisions 54 and 55), named `id`: the document under
 * `name`, and `jws`, the same document as a compact JWS signed with one of the read API's response-
 * signing keys, whose payload is it byte for byte (a client checks the signature, then reads the
 * document it already parsed).
 */
export function signedDocumentSchema<const Name extends string, Document extends z.ZodType>(name: Name, document: Document, id: string) {
  const jws = z.string().meta({
    description: `The ${name} as a compact JWS (EdDSA, \`kid\` of a key at the read API’s /.well-known/jwks.json): its payload is \`${name}\`, byte for byte`,
  });
  return z.object({ [name]: document, jws } as { [K in Name]: Document } & { jws: typeof jws }).meta({ id });
}
