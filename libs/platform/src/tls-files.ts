import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readConfiguredFile, type VariableProblem } from './secret-files';

/**
 * What a client of Kafka, MongoDB or Redis passes to `tls.connect`: the authority that signs the
 * servers' certificates (else the system's), and a client certificate for mutual TLS. The server's
 * certificate is always verified: `rejectUnauthorized` is true by type, so no setting, not even
 * NODE_TLS_REJECT_UNAUTHORIZED=0 (which only changes the default), turns the check off.
 */
export interface TlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: true;
}

/** A file named by the variable that set it, so every problem names the variable to fix. */
export interface TlsFile {
  variable: string;
  path: string;
}

/**
 * The one reading of "TLS from a CA, a certificate and a key file" that the three engines' clients
 * share. Each file is read once, at start, and checked for what it must hold (a certificate, or a
 * private key that matches the certificate); problems name the variable and the file, never a
 * file's contents.
 */
export function tlsFromFiles(files: { ca?: TlsFile | undefined; cert?: TlsFile | undefined; key?: TlsFile | undefined }): {
  tls: TlsOptions;
  problems: VariableProblem[];
} {
  const problems: VariableProblem[] = [];
  const tls: TlsOptions = { rejectUnauthorized: true };
  const read = (file: TlsFile): string | undefined => readConfiguredFile(file, problems);
  const certificate = (file: TlsFile): string | undefined => {
    const pem = read(file);
    if (pem === undefined) return undefined;
    try {
      new X509Certificate(pem);
      return pem;
    } catch {
      problems.push({ variable: file.variable, message: `${file.path} holds no PEM certificate` });
      return undefined;
    }
  };
  if (files.ca) {
    const ca = certificate(files.ca);
    if (ca !== undefined) tls.ca = ca;
  }
  if (files.cert && !files.key) problems.push({ variable: files.cert.variable, message: 'is set without its private key' });
  if (files.key && !files.cert) problems.push({ variable: files.key.variable, message: 'is set without its certificate' });
  if (files.cert && files.key) {
    const cert = certificate(files.cert);
    const keyPem = read(files.key);
    if (cert !== undefined && keyPem !== undefined) {
      try {
        const key = createPrivateKey(keyPem);
        if (!new X509Certificate(cert).checkPrivateKey(key)) {
          problems.push({
            variable: files.key.variable,
            message: `${files.key.path} is not the private key of ${files.cert.variable}'s certificate`,
          });
        } else {
          tls.cert = cert;
          tls.key = keyPem;
        }
      } catch {
        problems.push({ variable: files.key.variable, message: `${files.key.path} holds no unencrypted PEM private key` });
      }
    }
  }
  return { tls, problems };
}
