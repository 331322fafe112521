CREATE TABLE "audit_logs" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" text COLLATE "C",
	"actor_type" text COLLATE "C" NOT NULL,
	"actor_id" text COLLATE "C",
	"actor_label" text COLLATE "C",
	"action" text COLLATE "C" NOT NULL,
	"target_type" text COLLATE "C",
	"target_id" text COLLATE "C",
	"ip" text COLLATE "C",
	"outcome" text COLLATE "C" NOT NULL,
	"details" json,
	"created_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "device_counts" (
	"organization_id" text COLLATE "C" NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"platform" text COLLATE "C" NOT NULL,
	"compliance_status" text COLLATE "C" NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "device_counts_pkey" PRIMARY KEY("organization_id","status","platform","compliance_status")
);
--> statement-breakpoint
CREATE TABLE "device_logs" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"device_id" text COLLATE "C" NOT NULL,
	"event" text COLLATE "C" NOT NULL,
	"details" json NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"rowid" bigint GENERATED ALWAYS AS IDENTITY (sequence name "device_logs_rowid_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "device_tokens" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"device_id" text COLLATE "C" NOT NULL,
	"token_hash" text COLLATE "C" NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"revoked_at" timestamp(3) with time zone,
	"created_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "devices" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"user_id" text COLLATE "C",
	"device_name" text COLLATE "C" NOT NULL,
	"platform" text COLLATE "C" NOT NULL,
	"agent_version" text COLLATE "C" NOT NULL,
	"os_version" text COLLATE "C",
	"hardware_id" text COLLATE "C" NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"suspended_reason" text COLLATE "C",
	"last_seen" timestamp(3) with time zone NOT NULL,
	"enrolled_at" timestamp(3) with time zone NOT NULL,
	"policy_id" text COLLATE "C",
	"applied_policy_id" text COLLATE "C",
	"applied_policy_version" integer,
	"policy_applied_at" timestamp(3) with time zone,
	"vpn_address" bigint,
	"vpn_public_key" text COLLATE "C" NOT NULL,
	"facts" json,
	"ignored_facts" json,
	"enforcement" json,
	"enforcement_reported_at" timestamp(3) with time zone,
	"compliance_status" text COLLATE "C" DEFAULT 'unknown' NOT NULL,
	"compliance_violations" json DEFAULT '[]'::json NOT NULL,
	"compliance_missing" json DEFAULT '[]'::json NOT NULL,
	"compliance_checked_at" timestamp(3) with time zone,
	"compliance_stale" boolean DEFAULT true NOT NULL,
	"checkin_logged_at" timestamp(3) with time zone,
	"created_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL,
	"rowid" bigint GENERATED ALWAYS AS IDENTITY (sequence name "devices_rowid_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1)
);
--> statement-breakpoint
CREATE TABLE "enrollment_tokens" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"token_hash" text COLLATE "C" NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"max_uses" integer,
	"uses" integer DEFAULT 0 NOT NULL,
	"user_id" text COLLATE "C",
	"policy_id" text COLLATE "C",
	"created_by" text COLLATE "C" NOT NULL,
	"created_by_user_id" text COLLATE "C",
	"created_at" timestamp(3) with time zone NOT NULL,
	"revoked_at" timestamp(3) with time zone
);
--> statement-breakpoint
CREATE TABLE "wipes" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"device_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"reason" text COLLATE "C" NOT NULL,
	"notify_user" boolean NOT NULL,
	"initiated_by" text COLLATE "C" NOT NULL,
	"initiated_at" timestamp(3) with time zone NOT NULL,
	"completed_at" timestamp(3) with time zone,
	"error" text COLLATE "C"
);
--> statement-breakpoint
CREATE TABLE "events" (
	"sequence" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "events_sequence_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"type" text COLLATE "C" NOT NULL,
	"data" json NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhook_deliveries" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"webhook_id" text COLLATE "C" NOT NULL,
	"event_sequence" bigint NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp(3) with time zone,
	"last_status_code" integer,
	"last_error" text COLLATE "C",
	"last_duration_ms" integer,
	"created_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL,
	"completed_at" timestamp(3) with time zone
);
--> statement-breakpoint
CREATE TABLE "webhook_delivery_attempts" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"delivery_id" text COLLATE "C" NOT NULL,
	"attempt" integer NOT NULL,
	"status_code" integer,
	"duration_ms" integer NOT NULL,
	"error" text COLLATE "C",
	"started_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "webhooks" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"url" text COLLATE "C" NOT NULL,
	"events" json NOT NULL,
	"secret" text COLLATE "C" NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"disabled_reason" text COLLATE "C",
	"created_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "gdpr_requests" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"type" text COLLATE "C" NOT NULL,
	"status" text COLLATE "C" NOT NULL,
	"requested_by_type" text COLLATE "C" NOT NULL,
	"requested_by_id" text COLLATE "C",
	"processing" text COLLATE "C",
	"reason" text COLLATE "C",
	"result" text COLLATE "C" NOT NULL,
	"details" json NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"completed_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "api_keys" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"key_hash" text COLLATE "C" NOT NULL,
	"key_prefix" text COLLATE "C" NOT NULL,
	"scopes" json NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"revoked_at" timestamp(3) with time zone,
	"last_used_at" timestamp(3) with time zone
);
--> statement-breakpoint
CREATE TABLE "login_failures" (
	"email" text COLLATE "C" NOT NULL,
	"ip" text COLLATE "C" NOT NULL,
	"failures" integer NOT NULL,
	"window_started_at" timestamp(3) with time zone NOT NULL,
	"locked_until" timestamp(3) with time zone,
	CONSTRAINT "login_failures_pkey" PRIMARY KEY("email","ip")
);
--> statement-breakpoint
CREATE TABLE "mfa_challenges" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"kind" text COLLATE "C" NOT NULL,
	"token_digest" text COLLATE "C",
	"webauthn_challenge" text COLLATE "C",
	"failures" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"used_at" timestamp(3) with time zone
);
--> statement-breakpoint
CREATE TABLE "mfa_methods" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"type" text COLLATE "C" NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"secret" text COLLATE "C",
	"last_time_step" integer,
	"credential_id" text COLLATE "C",
	"public_key" text COLLATE "C",
	"sign_count" bigint DEFAULT 0 NOT NULL,
	"transports" json,
	"confirmed_at" timestamp(3) with time zone,
	"created_at" timestamp(3) with time zone NOT NULL,
	"last_used_at" timestamp(3) with time zone
);
--> statement-breakpoint
CREATE TABLE "organizations" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"plan" text COLLATE "C" DEFAULT 'standard' NOT NULL,
	"default_policy_id" text COLLATE "C",
	"sso_settings" json DEFAULT '{}' NOT NULL,
	"device_count" integer DEFAULT 0 NOT NULL,
	"device_list_version" integer DEFAULT 0 NOT NULL,
	"require_mfa" boolean DEFAULT false NOT NULL,
	"vpn_subnet" text COLLATE "C",
	"created_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "recovery_codes" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"code_digest" text COLLATE "C" NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"used_at" timestamp(3) with time zone
);
--> statement-breakpoint
CREATE TABLE "refresh_tokens" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"session_id" text COLLATE "C" NOT NULL,
	"issued_at" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"used_at" timestamp(3) with time zone,
	"revoked_at" timestamp(3) with time zone
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"ip" text COLLATE "C",
	"sign_in_method" text COLLATE "C" DEFAULT 'password' NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"revoked_at" timestamp(3) with time zone,
	"revoked_reason" text COLLATE "C"
);
--> statement-breakpoint
CREATE TABLE "signing_keys" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"algorithm" text COLLATE "C" NOT NULL,
	"private_jwk" text COLLATE "C" NOT NULL,
	"public_jwk" text COLLATE "C" NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "users" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"email" text COLLATE "C" NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"role" text COLLATE "C" NOT NULL,
	"password_hash" text COLLATE "C" NOT NULL,
	"is_disabled" boolean DEFAULT false NOT NULL,
	"is_restricted" boolean DEFAULT false NOT NULL,
	"mfa_enabled" boolean DEFAULT false NOT NULL,
	"tokens_valid_after" timestamp(3) with time zone,
	"last_login_at" timestamp(3) with time zone,
	"device_activity_objected_at" timestamp(3) with time zone,
	"created_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL,
	"deleted_at" timestamp(3) with time zone,
	"erased_at" timestamp(3) with time zone
);
--> statement-breakpoint
CREATE TABLE "device_cas" (
	"organization_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"certificate_pem" text COLLATE "C" NOT NULL,
	"sealed_private_key" text COLLATE "C" NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "device_certificates" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"device_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"serial" text COLLATE "C" NOT NULL,
	"fingerprint" text COLLATE "C" NOT NULL,
	"not_before" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"revoked_at" timestamp(3) with time zone,
	"revoked_reason" text COLLATE "C",
	"created_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "server_keys" (
	"name" text COLLATE "C" PRIMARY KEY NOT NULL,
	"public_key" text COLLATE "C" NOT NULL,
	"sealed_private_key" text COLLATE "C" NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "policies" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"name_key" text COLLATE "C" NOT NULL,
	"description" text COLLATE "C" DEFAULT '' NOT NULL,
	"current_version" integer NOT NULL,
	"is_active" boolean DEFAULT true NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "policy_versions" (
	"policy_id" text COLLATE "C" NOT NULL,
	"version" integer NOT NULL,
	"name" text COLLATE "C" NOT NULL,
	"description" text COLLATE "C" NOT NULL,
	"policy_data" json NOT NULL,
	"changes" json NOT NULL,
	"changed_by" text COLLATE "C" NOT NULL,
	"changed_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "policy_versions_pkey" PRIMARY KEY("policy_id","version")
);
--> statement-breakpoint
CREATE TABLE "saml_assertions" (
	"organization_id" text COLLATE "C" NOT NULL,
	"assertion_id" text COLLATE "C" NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "saml_assertions_pkey" PRIMARY KEY("organization_id","assertion_id")
);
--> statement-breakpoint
CREATE TABLE "sso_codes" (
	"code_digest" text COLLATE "C" PRIMARY KEY NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"provider" text COLLATE "C" NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"used_at" timestamp(3) with time zone
);
--> statement-breakpoint
CREATE TABLE "sso_domains" (
	"domain" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"confirmed_at" timestamp(3) with time zone,
	"confirmed_by" text COLLATE "C",
	"created_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "sso_identities" (
	"organization_id" text COLLATE "C" NOT NULL,
	"provider" text COLLATE "C" NOT NULL,
	"issuer" text COLLATE "C" NOT NULL,
	"subject" text COLLATE "C" NOT NULL,
	"user_id" text COLLATE "C" NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"last_sign_in_at" timestamp(3) with time zone NOT NULL,
	CONSTRAINT "sso_identities_pkey" PRIMARY KEY("organization_id","provider","issuer","subject")
);
--> statement-breakpoint
CREATE TABLE "sso_requests" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"provider" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"redirect_uri" text COLLATE "C" NOT NULL,
	"client_state" text COLLATE "C",
	"nonce" text COLLATE "C",
	"code_verifier" text COLLATE "C",
	"created_at" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"used_at" timestamp(3) with time zone
);
--> statement-breakpoint
ALTER TABLE "device_logs" ADD CONSTRAINT "device_logs_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_tokens" ADD CONSTRAINT "device_tokens_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "wipes" ADD CONSTRAINT "wipes_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_webhook_id_webhooks_id_fk" FOREIGN KEY ("webhook_id") REFERENCES "public"."webhooks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_event_sequence_events_sequence_fk" FOREIGN KEY ("event_sequence") REFERENCES "public"."events"("sequence") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_delivery_attempts" ADD CONSTRAINT "webhook_delivery_attempts_delivery_id_webhook_deliveries_id_fk" FOREIGN KEY ("delivery_id") REFERENCES "public"."webhook_deliveries"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mfa_challenges" ADD CONSTRAINT "mfa_challenges_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "mfa_methods" ADD CONSTRAINT "mfa_methods_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "recovery_codes" ADD CONSTRAINT "recovery_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refresh_tokens" ADD CONSTRAINT "refresh_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "refresh_tokens" ADD CONSTRAINT "refresh_tokens_session_id_sessions_id_fk" FOREIGN KEY ("session_id") REFERENCES "public"."sessions"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "users" ADD CONSTRAINT "users_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_cas" ADD CONSTRAINT "device_cas_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "device_certificates" ADD CONSTRAINT "device_certificates_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "policy_versions" ADD CONSTRAINT "policy_versions_policy_id_policies_id_fk" FOREIGN KEY ("policy_id") REFERENCES "public"."policies"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "saml_assertions" ADD CONSTRAINT "saml_assertions_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_codes" ADD CONSTRAINT "sso_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_domains" ADD CONSTRAINT "sso_domains_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_identities" ADD CONSTRAINT "sso_identities_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_identities" ADD CONSTRAINT "sso_identities_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "sso_requests" ADD CONSTRAINT "sso_requests_organization_id_organizations_id_fk" FOREIGN KEY ("organization_id") REFERENCES "public"."organizations"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_logs_organization_idx" ON "audit_logs" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "audit_logs_actor_idx" ON "audit_logs" USING btree ("organization_id","actor_id","created_at");--> statement-breakpoint
CREATE INDEX "audit_logs_action_idx" ON "audit_logs" USING btree ("organization_id","action","created_at");--> statement-breakpoint
CREATE INDEX "audit_logs_target_idx" ON "audit_logs" USING btree ("organization_id","target_id");--> statement-breakpoint
CREATE INDEX "audit_logs_anonymous_label_idx" ON "audit_logs" USING btree ("actor_label") WHERE "audit_logs"."actor_type" = 'anonymous';--> statement-breakpoint
CREATE INDEX "device_logs_device_idx" ON "device_logs" USING btree ("device_id","created_at");--> statement-breakpoint
CREATE INDEX "device_logs_device_event_idx" ON "device_logs" USING btree ("device_id","event","created_at");--> statement-breakpoint
CREATE INDEX "device_logs_created_idx" ON "device_logs" USING btree ("created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "device_logs_rowid_unique" ON "device_logs" USING btree ("rowid");--> statement-breakpoint
CREATE UNIQUE INDEX "device_tokens_hash_unique" ON "device_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "device_tokens_device_idx" ON "device_tokens" USING btree ("device_id");--> statement-breakpoint
CREATE UNIQUE INDEX "devices_vpn_address_unique" ON "devices" USING btree ("vpn_address");--> statement-breakpoint
CREATE UNIQUE INDEX "devices_vpn_public_key_unique" ON "devices" USING btree ("vpn_public_key") WHERE "devices"."status" != 'wiped';--> statement-breakpoint
CREATE INDEX "devices_organization_idx" ON "devices" USING btree ("organization_id","enrolled_at","id");--> statement-breakpoint
CREATE INDEX "devices_organization_status_idx" ON "devices" USING btree ("organization_id","status","enrolled_at");--> statement-breakpoint
CREATE INDEX "devices_organization_platform_idx" ON "devices" USING btree ("organization_id","platform","enrolled_at");--> statement-breakpoint
CREATE INDEX "devices_organization_user_idx" ON "devices" USING btree ("organization_id","user_id","enrolled_at");--> statement-breakpoint
CREATE INDEX "devices_organization_compliance_idx" ON "devices" USING btree ("organization_id","compliance_status","enrolled_at");--> statement-breakpoint
CREATE INDEX "devices_organization_policy_idx" ON "devices" USING btree ("organization_id","policy_id","enrolled_at","id","status");--> statement-breakpoint
CREATE INDEX "devices_organization_hardware_idx" ON "devices" USING btree ("organization_id","hardware_id");--> statement-breakpoint
CREATE INDEX "devices_status_last_seen_idx" ON "devices" USING btree ("status","last_seen");--> statement-breakpoint
CREATE INDEX "devices_compliance_stale_idx" ON "devices" USING btree ("compliance_stale","organization_id","id");--> statement-breakpoint
CREATE UNIQUE INDEX "devices_rowid_unique" ON "devices" USING btree ("rowid");--> statement-breakpoint
CREATE UNIQUE INDEX "enrollment_tokens_hash_unique" ON "enrollment_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "enrollment_tokens_organization_idx" ON "enrollment_tokens" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "enrollment_tokens_creator_idx" ON "enrollment_tokens" USING btree ("created_by_user_id");--> statement-breakpoint
CREATE INDEX "wipes_device_status_idx" ON "wipes" USING btree ("device_id","status","initiated_at");--> statement-breakpoint
CREATE INDEX "wipes_device_initiated_idx" ON "wipes" USING btree ("device_id","initiated_at");--> statement-breakpoint
CREATE INDEX "wipes_status_idx" ON "wipes" USING btree ("status","initiated_at");--> statement-breakpoint
CREATE UNIQUE INDEX "events_id_unique" ON "events" USING btree ("id");--> statement-breakpoint
CREATE INDEX "events_organization_idx" ON "events" USING btree ("organization_id","sequence");--> statement-breakpoint
CREATE INDEX "events_created_idx" ON "events" USING btree ("created_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_due_idx" ON "webhook_deliveries" USING btree ("status","next_attempt_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_webhook_idx" ON "webhook_deliveries" USING btree ("webhook_id","event_sequence");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_completed_idx" ON "webhook_deliveries" USING btree ("completed_at");--> statement-breakpoint
CREATE INDEX "webhook_deliveries_event_idx" ON "webhook_deliveries" USING btree ("event_sequence");--> statement-breakpoint
CREATE INDEX "webhook_delivery_attempts_delivery_idx" ON "webhook_delivery_attempts" USING btree ("delivery_id","attempt");--> statement-breakpoint
CREATE INDEX "webhooks_organization_idx" ON "webhooks" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "gdpr_requests_organization_idx" ON "gdpr_requests" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "gdpr_requests_user_idx" ON "gdpr_requests" USING btree ("user_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "api_keys_hash_unique" ON "api_keys" USING btree ("key_hash");--> statement-breakpoint
CREATE INDEX "api_keys_organization_idx" ON "api_keys" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "mfa_challenges_token_unique" ON "mfa_challenges" USING btree ("token_digest");--> statement-breakpoint
CREATE INDEX "mfa_challenges_user_idx" ON "mfa_challenges" USING btree ("user_id","kind");--> statement-breakpoint
CREATE INDEX "mfa_challenges_expires_idx" ON "mfa_challenges" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "mfa_methods_user_idx" ON "mfa_methods" USING btree ("user_id");--> statement-breakpoint
CREATE UNIQUE INDEX "mfa_methods_credential_unique" ON "mfa_methods" USING btree ("credential_id");--> statement-breakpoint
CREATE UNIQUE INDEX "organizations_vpn_subnet_unique" ON "organizations" USING btree ("vpn_subnet");--> statement-breakpoint
CREATE INDEX "recovery_codes_user_idx" ON "recovery_codes" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "refresh_tokens_session_idx" ON "refresh_tokens" USING btree ("session_id");--> statement-breakpoint
CREATE INDEX "refresh_tokens_user_idx" ON "refresh_tokens" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "refresh_tokens_expires_idx" ON "refresh_tokens" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sessions_user_idx" ON "sessions" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "sessions_expires_idx" ON "sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_unique" ON "users" USING btree ("email");--> statement-breakpoint
CREATE INDEX "users_organization_idx" ON "users" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "device_certificates_fingerprint_unique" ON "device_certificates" USING btree ("fingerprint");--> statement-breakpoint
CREATE INDEX "device_certificates_device_idx" ON "device_certificates" USING btree ("device_id","created_at","id");--> statement-breakpoint
CREATE UNIQUE INDEX "policies_organization_name_key_unique" ON "policies" USING btree ("organization_id","name_key");--> statement-breakpoint
CREATE INDEX "policies_organization_idx" ON "policies" USING btree ("organization_id","created_at");--> statement-breakpoint
CREATE INDEX "saml_assertions_expires_idx" ON "saml_assertions" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sso_codes_expires_idx" ON "sso_codes" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "sso_domains_organization_idx" ON "sso_domains" USING btree ("organization_id");--> statement-breakpoint
CREATE INDEX "sso_identities_user_idx" ON "sso_identities" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "sso_requests_expires_idx" ON "sso_requests" USING btree ("expires_at");