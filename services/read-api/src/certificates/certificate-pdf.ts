import { PDFDocument, StandardFonts, rgb, type PDFFont, type PDFPage } from 'pdf-lib';
import QRCode from 'qrcode';
import type { CertificateResource } from '@rsd/contracts';

/** A4 in points. */
const PAGE = { width: 595.28, height: 841.89 } as const;
const MARGIN = 56;
const PILLAR_LABELS = {
  structuralIntegrity: 'Structural integrity',
  failureResistance: 'Failure resistance',
  deviceHealth: 'Device health',
  recoveryCapability: 'Recovery capability',
} as const;

/**
 * Decision 55: a certificate as a one-page PDF (pdf-lib). Its text is real text in a standard font,
 * so it can be selected and searched (score, grade, dates, organization, recipient); the JWS is in
 * the document's Keywords and drawn as a QR code, so the page alone can be verified offline. The
 * standard fonts know only WinAnsi: a character outside it is shown as "?" on the page; the JWS
 * (and the JSON) keep every name exactly. Dated with issuedAt, so the same certificate makes the same file.
 */
export async function certificatePdf({ certificate, jws }: CertificateResource): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const issuedAt = new Date(certificate.issuedAt);
  doc.setTitle(`Resilience score certificate ${certificate.certificateId}`);
  doc.setSubject(
    `Resilience score ${certificate.score} (${certificate.grade}) of ${certificate.organization.organizationId} as of ${certificate.asOf}`,
  );
  doc.setKeywords([jws]);
  doc.setProducer('Resilience Score Data API');
  doc.setCreator('Resilience Score Data API');
  doc.setCreationDate(issuedAt);
  doc.setModificationDate(issuedAt);

  const page = doc.addPage([PAGE.width, PAGE.height]);
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const mono = await doc.embedFont(StandardFonts.Courier);
  let y = PAGE.height - MARGIN;
  const line = (text: string, font: PDFFont, size: number, gap = 6) => {
    page.drawText(encodable(font, text), { x: MARGIN, y: y - size, size, font, color: rgb(0.1, 0.1, 0.1) });
    y -= size + gap;
  };

  line('Resilience Score Certificate', bold, 22, 14);
  line(`Score: ${certificate.score}`, bold, 30, 6);
  line(`Grade: ${certificate.grade}`, bold, 18, 16);
  const { recipient } = certificate;
  const rows: [string, string][] = [
    ['Organization', certificate.organization.organizationId],
    ['Recipient', `${recipient.name ?? '(not named)'}${recipient.type ? ` (${recipient.type})` : ''}`],
    ['Client ID', recipient.clientId],
    ['Score date', certificate.scoreDate],
    ['Calculated at', certificate.calculatedAt],
    ['As of', certificate.asOf],
    ['Issued at', certificate.issuedAt],
    ['Certificate ID', certificate.certificateId],
  ];
  for (const [pillar, label] of Object.entries(PILLAR_LABELS)) {
    const value = certificate.pillarScores?.[pillar as keyof typeof PILLAR_LABELS];
    if (value !== undefined) rows.push([label, String(value)]);
  }
  for (const [label, value] of rows) line(`${label}: ${value}`, regular, 12);
  y -= 8;
  line('Events it rests on:', regular, 9, 3);
  for (const id of certificate.eventIds) line(id, mono, 8, 3);
  y -= 10;

  const qrSize = 250;
  drawQrCode(page, jws, { x: MARGIN, y: y - qrSize, size: qrSize });
  y -= qrSize + 14;
  const notes = [
    "The QR code and this document's Keywords hold the certificate as a compact JWS (EdDSA).",
    "Verify it offline with the read API's published keys (/.well-known/jwks.json), e.g. rsd certificate verify.",
    'What the JWS says is the certificate; this page is a rendering of it.',
  ];
  for (const note of notes) line(note, regular, 9, 3);
  return Buffer.from(await doc.save());
}

/** Draws the QR code as filled squares (vectors, sharp at any zoom), one rectangle per run of dark modules in a row. */
function drawQrCode(page: PDFPage, text: string, at: { x: number; y: number; size: number }): void {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'L' });
  const count = modules.size;
  const quiet = 4;
  const cell = at.size / (count + 2 * quiet);
  for (let row = 0; row < count; row += 1) {
    let column = 0;
    while (column < count) {
      if (!modules.get(row, column)) {
        column += 1;
        continue;
      }
      const start = column;
      while (column < count && modules.get(row, column)) column += 1;
      page.drawRectangle({
        x: at.x + (quiet + start) * cell,
        y: at.y + at.size - (quiet + row + 1) * cell,
        width: (column - start) * cell,
        height: cell,
        color: rgb(0, 0, 0),
      });
    }
  }
}

/** The code points each font can encode, worked out once per font. */
const characterSets = new WeakMap<PDFFont, Set<number>>();

/** The text with each character the font cannot encode (outside WinAnsi for a standard font) replaced by "?". */
function encodable(font: PDFFont, text: string): string {
  let known = characterSets.get(font);
  if (!known) characterSets.set(font, (known = new Set(font.getCharacterSet())));
  const set = known;
  return [...text].map((character) => (set.has(character.codePointAt(0) ?? -1) ? character : '?')).join('');
}
