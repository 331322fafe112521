declare module "*.service" {
  /** The file's text (imported `with { type: "text" }`). */
  const text: string;
  export default text;
}
