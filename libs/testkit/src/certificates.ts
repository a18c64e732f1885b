import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A certificate and its private key, as PEM files. */
export interface IssuedCertificate {
  certFile: string;
  keyFile: string;
}

/**
 * A certificate authority of a test's own, made with openssl (as `scripts/infra.sh cluster` makes the
 * engines'): P-256 keys, valid for two days, its files in `dir`. Its certificates name 127.0.0.1 and
 * localhost and serve as server and client certificates alike.
 */
export interface TestCertificateAuthority {
  /** The authority's certificate: what a client is given to trust the servers it signed. */
  caFile: string;
  issue(name: string): IssuedCertificate;
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

export function testCertificateAuthority(dir: string, name: string): TestCertificateAuthority {
  const caFile = join(dir, `${name}.crt`);
  const caKey = join(dir, `${name}.key`);
  openssl([
    'req',
    '-x509',
    ...EC_KEY,
    '-keyout',
    caKey,
    '-out',
    caFile,
    '-subj',
    `/CN=${name}`,
    '-days',
    '2',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  return {
    caFile,
    issue: (leaf) => {
      const keyFile = join(dir, `${leaf}.key`);
      const certFile = join(dir, `${leaf}.crt`);
      const csr = join(dir, `${leaf}.csr`);
      const extensions = join(dir, `${leaf}.ext`);
      writeFileSync(
        extensions,
        'basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth,clientAuth\n',
      );
      openssl(['req', ...EC_KEY, '-keyout', keyFile, '-out', csr, '-subj', `/CN=${leaf}`]);
      openssl([
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        caFile,
        '-CAkey',
        caKey,
        '-CAcreateserial',
        '-days',
        '2',
        '-sha256',
        '-extfile',
        extensions,
        '-out',
        certFile,
      ]);
      return { certFile, keyFile };
    },
  };
}
