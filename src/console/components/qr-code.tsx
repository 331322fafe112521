import { renderSVG } from "uqr";

/** An SVG document as an image the page's CSP allows (img-src data:); base64 of its UTF-8 bytes. */
export function svgDataUrl(svg: string): string {
  const bytes = new TextEncoder().encode(svg);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `data:image/svg+xml;base64,${btoa(binary)}`;
}

/**
 * A QR code for a phone's camera or scanner: `svg` as the server drew it, or `text` drawn here with the
 * same library the server uses (uqr). White around it, whatever the theme, so a scanner finds its edge.
 */
export function QrCode({ svg, text, alt }: { svg?: string; text?: string; alt: string }) {
  const image = svg ?? renderSVG(text ?? "", { border: 4 });
  return <img class="qr-code" src={svgDataUrl(image)} alt={alt} width={240} height={240} />;
}
