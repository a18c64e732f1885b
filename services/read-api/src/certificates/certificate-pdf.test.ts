import { PDFDocument } from 'pdf-lib';
import { aCertificate } from '@rsd/testkit';
import { certificatePdf } from './certificate-pdf';

const certificate = aCertificate({
  // Outside WinAnsi, the standard fonts' encoding: pdf-lib throws on such a character unless it is replaced.
  recipient: { clientId: 'rs_AAAAAAAAAAAAAAAAAAAAAAAA', type: 'insurance_provider', name: '東京海上 Żółć' },
});
const jws = `${'a'.repeat(80)}.${'b'.repeat(700)}.${'c'.repeat(86)}`;

describe("a certificate's PDF (decision 55)", () => {
  test('when the recipient is named outside the standard fonts, then the PDF is still made: one page, dated when issued, the JWS in its Keywords', async () => {
    const pdf = await certificatePdf({ certificate, jws });

    const document = await PDFDocument.load(pdf);
    expect(document.getPageCount()).toBe(1);
    expect(document.getKeywords()).toBe(jws);
    expect(document.getCreationDate()?.toISOString()).toBe(certificate.issuedAt);
    expect(document.getTitle()).toContain(certificate.certificateId);
  });
});
