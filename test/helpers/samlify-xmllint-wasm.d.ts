declare module "@authenio/samlify-xmllint-wasm" {
  /** Validates a SAML message against the SAML 2.0 XSDs; rejects when it is not valid. */
  export function validate(xml: string): Promise<boolean>;
}
