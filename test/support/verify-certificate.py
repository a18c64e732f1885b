"""Verifies a certificate's compact JWS (decision 55) with joserfc, a JOSE implementation independent
of the product's: the key set is a JWKS file (as /.well-known/jwks.json answers it), the JWS is on
standard input. Prints the payload and exits 0 when the signature verifies with the key its `kid`
names (EdDSA only); prints why and exits 1 otherwise. Run with the Python of scripts/python-env.sh."""

import json
import sys
import warnings

from joserfc import jws
from joserfc.errors import JoseError
from joserfc.jwk import KeySet


def main() -> int:
    # RFC 9864 names the algorithm "Ed25519" from now on and deprecates the polymorphic "EdDSA";
    # decision 24's keys say "EdDSA", which every verifier still accepts: the warning is noise here.
    warnings.filterwarnings("ignore", message="EdDSA is deprecated")
    with open(sys.argv[1], encoding="utf-8") as file:
        keys = KeySet.import_key_set(json.load(file))
    token = sys.stdin.read().strip()
    try:
        verified = jws.deserialize_compact(token, keys, algorithms=["EdDSA"])
    except (JoseError, ValueError) as error:
        print(f"NOT VALID: {type(error).__name__}: {error}")
        return 1
    print(json.dumps({"header": verified.protected, "payload": json.loads(verified.payload)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
