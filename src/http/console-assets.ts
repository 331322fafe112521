import consoleHtml from "../console/index.html";

/** Where the console lives; `/` redirects here. */
export const CONSOLE_PATH = "/console";

/** One file of the console, each compressed form made once (the executable's copy never changes). */
export interface ConsoleAsset {
  contentType: string;
  etag: string;
  /** Hash-named files are cached for a year; the page itself is revalidated on every load. */
  isImmutable: boolean;
  identity: Uint8Array<ArrayBuffer>;
  readonly gzip: Uint8Array<ArrayBuffer>;
  readonly brotli: Uint8Array<ArrayBuffer>;
}

export interface ConsoleAssets {
  /** The page (index.html), answered for every /console path that is not a file: the console routes itself. */
  page: ConsoleAsset;
  /** Files by URL path (`/console/chunk-1a2b3c.js`). */
  files: Map<string, ConsoleAsset>;
}

interface BuiltFile {
  /** The file's name as the page refers to it (`chunk-1a2b3c.js`). */
  name: string;
  contentType: string;
  isPage: boolean;
  bytes: Uint8Array<ArrayBuffer>;
}

/**
 * The console's files: bundled into the executable by `bun build --compile` (an HTML import, whose
 * `files` list the bundle), or, when running from source (`npm start`), bundled here once at start by
 * the same bundler. The page names its files at `/`; they are served under /console/.
 */
export async function loadConsoleAssets(): Promise<ConsoleAssets> {
  const built = hasEmbeddedFiles(consoleHtml) ? await embeddedFiles(consoleHtml) : await bundleFromSource();
  const files = new Map<string, ConsoleAsset>();
  let pageText = "";
  for (const file of built) {
    if (file.isPage) pageText = new TextDecoder().decode(file.bytes);
    else files.set(`${CONSOLE_PATH}/${file.name}`, compressed(file.contentType, file.bytes, true));
  }
  for (const file of built.filter((each) => !each.isPage)) {
    pageText = pageText
      .replaceAll(`"/${file.name}"`, `"${CONSOLE_PATH}/${file.name}"`)
      .replaceAll(`"./${file.name}"`, `"${CONSOLE_PATH}/${file.name}"`);
  }
  const page = compressed("text/html; charset=utf-8", new TextEncoder().encode(pageText), false);
  return { page, files };
}

type EmbeddedBundle = { files: { path: string; loader: string; headers: Record<string, string> }[] };

function hasEmbeddedFiles(bundle: unknown): bundle is EmbeddedBundle {
  return Array.isArray((bundle as Partial<EmbeddedBundle>).files);
}

async function embeddedFiles(bundle: EmbeddedBundle): Promise<BuiltFile[]> {
  return Promise.all(
    bundle.files.map(async (file) => ({
      name: file.path.split("/").at(-1) ?? file.path,
      contentType: file.headers["content-type"] ?? "application/octet-stream",
      isPage: file.loader === "html",
      bytes: await Bun.file(file.path).bytes(),
    })),
  );
}

async function bundleFromSource(): Promise<BuiltFile[]> {
  const result = await Bun.build({
    entrypoints: [Bun.fileURLToPath(new URL("../console/index.html", import.meta.url))],
    minify: true,
    define: { "process.env.NODE_ENV": '"production"' },
  });
  if (!result.success) throw new AggregateError(result.logs, "the console did not bundle");
  return Promise.all(
    result.outputs.map(async (output) => ({
      name: output.path.split("/").at(-1) ?? output.path,
      contentType: output.type,
      isPage: output.type.startsWith("text/html"),
      bytes: new Uint8Array(await output.arrayBuffer()),
    })),
  );
}

/**
 * A file with its compressed forms, each made when first asked for and then kept: compressing the whole
 * console at brotli's best took most of the start, before the first request could be answered.
 */
function compressed(
  contentType: string,
  identity: Uint8Array<ArrayBuffer>,
  isImmutable: boolean,
): ConsoleAsset {
  let gzip: Uint8Array<ArrayBuffer> | undefined;
  let brotli: Uint8Array<ArrayBuffer> | undefined;
  return {
    contentType,
    etag: `"${new Bun.CryptoHasher("sha256").update(identity).digest("base64url").slice(0, 22)}"`,
    isImmutable,
    identity,
    get gzip() {
      gzip ??= Bun.gzipSync(identity, { level: 9 });
      return gzip;
    },
    get brotli() {
      if (!brotli) {
        // node:zlib is loaded on first use: loading it took ~5 ms of every start.
        const zlib = process.getBuiltinModule("node:zlib");
        brotli = new Uint8Array(
          zlib.brotliCompressSync(identity, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } }),
        );
      }
      return brotli;
    },
  };
}
