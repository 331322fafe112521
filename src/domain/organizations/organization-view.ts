export type Plan = "standard" | "enterprise";

export interface SsoSettings {
  oidc?: { enabled: boolean; issuer?: string; client_id?: string; client_secret?: string };
  saml?: { enabled: boolean; idp_entity_id?: string; idp_sso_url?: string; idp_certificate?: string };
}

export interface OrganizationView {
  id: string;
  name: string;
  plan: Plan;
  default_policy_id: string | null;
  device_count: number;
  user_count: number;
  sso: SsoSettings;
  created_at: string;
  updated_at: string;
}

/** Secrets in SSO settings are never returned; a boolean says whether one is set. */
export function redactSso(settings: Record<string, unknown>): SsoSettings {
  const sso = structuredClone(settings) as SsoSettings & {
    oidc?: { client_secret?: string; has_client_secret?: boolean };
  };
  if (sso.oidc) {
    sso.oidc.has_client_secret = Boolean(sso.oidc.client_secret);
    delete sso.oidc.client_secret;
  }
  return sso;
}
