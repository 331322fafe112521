declare module "@scalar/api-reference/browser/standalone.js" {
  /** Path of the embedded file (imported `with { type: "file" }`). */
  const path: string;
  export default path;
}
