CREATE TABLE `audit_logs` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text,
	`actor_type` text NOT NULL,
	`actor_id` text,
	`actor_label` text,
	`action` text NOT NULL,
	`target_type` text,
	`target_id` text,
	`ip` text,
	`outcome` text NOT NULL,
	`details` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_logs_organization_idx` ON `audit_logs` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `audit_logs_actor_idx` ON `audit_logs` (`organization_id`,`actor_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `audit_logs_action_idx` ON `audit_logs` (`organization_id`,`action`,`created_at`);--> statement-breakpoint
CREATE TABLE `device_logs` (
	`id` text PRIMARY KEY NOT NULL,
	`device_id` text NOT NULL,
	`event` text NOT NULL,
	`details` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `device_logs_device_idx` ON `device_logs` (`device_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `device_logs_device_event_idx` ON `device_logs` (`device_id`,`event`,`created_at`);--> statement-breakpoint
CREATE INDEX `device_logs_created_idx` ON `device_logs` (`created_at`);--> statement-breakpoint
CREATE TABLE `device_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`device_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_tokens_hash_unique` ON `device_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `device_tokens_device_idx` ON `device_tokens` (`device_id`);--> statement-breakpoint
CREATE TABLE `devices` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`user_id` text,
	`device_name` text NOT NULL,
	`platform` text NOT NULL,
	`agent_version` text NOT NULL,
	`os_version` text,
	`hardware_id` text NOT NULL,
	`status` text NOT NULL,
	`suspended_reason` text,
	`last_seen` text NOT NULL,
	`enrolled_at` text NOT NULL,
	`policy_id` text,
	`applied_policy_id` text,
	`applied_policy_version` integer,
	`policy_applied_at` text,
	`vpn_address` integer,
	`vpn_public_key` text NOT NULL,
	`facts` text,
	`compliance_status` text DEFAULT 'unknown' NOT NULL,
	`compliance_violations` text DEFAULT '[]' NOT NULL,
	`compliance_missing` text DEFAULT '[]' NOT NULL,
	`compliance_checked_at` text,
	`compliance_stale` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `devices_vpn_address_unique` ON `devices` (`vpn_address`);--> statement-breakpoint
CREATE UNIQUE INDEX `devices_vpn_public_key_unique` ON `devices` (`vpn_public_key`) WHERE "devices"."status" != 'wiped';--> statement-breakpoint
CREATE INDEX `devices_organization_idx` ON `devices` (`organization_id`,`enrolled_at`,`id`);--> statement-breakpoint
CREATE INDEX `devices_organization_status_idx` ON `devices` (`organization_id`,`status`,`enrolled_at`);--> statement-breakpoint
CREATE INDEX `devices_organization_platform_idx` ON `devices` (`organization_id`,`platform`,`enrolled_at`);--> statement-breakpoint
CREATE INDEX `devices_organization_user_idx` ON `devices` (`organization_id`,`user_id`,`enrolled_at`);--> statement-breakpoint
CREATE INDEX `devices_organization_policy_idx` ON `devices` (`organization_id`,`policy_id`,`enrolled_at`,`id`,`status`);--> statement-breakpoint
CREATE INDEX `devices_organization_hardware_idx` ON `devices` (`organization_id`,`hardware_id`);--> statement-breakpoint
CREATE INDEX `devices_status_last_seen_idx` ON `devices` (`status`,`last_seen`);--> statement-breakpoint
CREATE INDEX `devices_compliance_stale_idx` ON `devices` (`compliance_stale`,`organization_id`,`id`);--> statement-breakpoint
CREATE TABLE `enrollment_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` text NOT NULL,
	`max_uses` integer,
	`uses` integer DEFAULT 0 NOT NULL,
	`user_id` text,
	`policy_id` text,
	`created_by` text NOT NULL,
	`created_at` text NOT NULL,
	`revoked_at` text
);
--> statement-breakpoint
CREATE UNIQUE INDEX `enrollment_tokens_hash_unique` ON `enrollment_tokens` (`token_hash`);--> statement-breakpoint
CREATE INDEX `enrollment_tokens_organization_idx` ON `enrollment_tokens` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `wipes` (
	`id` text PRIMARY KEY NOT NULL,
	`device_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`status` text NOT NULL,
	`reason` text NOT NULL,
	`notify_user` integer NOT NULL,
	`initiated_by` text NOT NULL,
	`initiated_at` text NOT NULL,
	`completed_at` text,
	`error` text,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `wipes_device_status_idx` ON `wipes` (`device_id`,`status`,`initiated_at`);--> statement-breakpoint
CREATE INDEX `wipes_status_idx` ON `wipes` (`status`,`initiated_at`);--> statement-breakpoint
CREATE TABLE `events` (
	`sequence` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`organization_id` text NOT NULL,
	`type` text NOT NULL,
	`data` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `events_id_unique` ON `events` (`id`);--> statement-breakpoint
CREATE INDEX `events_organization_idx` ON `events` (`organization_id`,`sequence`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`webhook_id` text NOT NULL,
	`event_sequence` integer NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` text,
	`last_status_code` integer,
	`last_error` text,
	`last_duration_ms` integer,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`completed_at` text,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`event_sequence`) REFERENCES `events`(`sequence`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `webhook_deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`event_sequence`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_completed_idx` ON `webhook_deliveries` (`completed_at`);--> statement-breakpoint
CREATE TABLE `webhook_delivery_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`delivery_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`status_code` integer,
	`duration_ms` integer NOT NULL,
	`error` text,
	`started_at` text NOT NULL,
	FOREIGN KEY (`delivery_id`) REFERENCES `webhook_deliveries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `webhook_delivery_attempts_delivery_idx` ON `webhook_delivery_attempts` (`delivery_id`,`attempt`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`secret` text NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`disabled_reason` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhooks_organization_idx` ON `webhooks` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`key_hash` text NOT NULL,
	`key_prefix` text NOT NULL,
	`scopes` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`last_used_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_hash_unique` ON `api_keys` (`key_hash`);--> statement-breakpoint
CREATE INDEX `api_keys_organization_idx` ON `api_keys` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `login_failures` (
	`email` text NOT NULL,
	`ip` text NOT NULL,
	`failures` integer NOT NULL,
	`window_started_at` text NOT NULL,
	`locked_until` text,
	PRIMARY KEY(`email`, `ip`)
);
--> statement-breakpoint
CREATE TABLE `organizations` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`plan` text DEFAULT 'standard' NOT NULL,
	`default_policy_id` text,
	`sso_settings` text DEFAULT '{}' NOT NULL,
	`device_count` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `refresh_tokens` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`session_id` text NOT NULL,
	`issued_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`revoked_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`session_id`) REFERENCES `sessions`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `refresh_tokens_session_idx` ON `refresh_tokens` (`session_id`);--> statement-breakpoint
CREATE INDEX `refresh_tokens_user_idx` ON `refresh_tokens` (`user_id`);--> statement-breakpoint
CREATE INDEX `refresh_tokens_expires_idx` ON `refresh_tokens` (`expires_at`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`ip` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`revoked_reason` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sessions_user_idx` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE INDEX `sessions_expires_idx` ON `sessions` (`expires_at`);--> statement-breakpoint
CREATE TABLE `signing_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`algorithm` text NOT NULL,
	`private_jwk` text NOT NULL,
	`public_jwk` text NOT NULL,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`email` text NOT NULL,
	`name` text NOT NULL,
	`role` text NOT NULL,
	`password_hash` text NOT NULL,
	`is_disabled` integer DEFAULT false NOT NULL,
	`is_restricted` integer DEFAULT false NOT NULL,
	`tokens_valid_after` text,
	`last_login_at` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`deleted_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_unique` ON `users` (`email`);--> statement-breakpoint
CREATE INDEX `users_organization_idx` ON `users` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `policies` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`current_version` integer NOT NULL,
	`is_active` integer DEFAULT true NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `policies_organization_name_unique` ON `policies` (`organization_id`,`name`);--> statement-breakpoint
CREATE INDEX `policies_organization_idx` ON `policies` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `policy_versions` (
	`policy_id` text NOT NULL,
	`version` integer NOT NULL,
	`name` text NOT NULL,
	`description` text NOT NULL,
	`policy_data` text NOT NULL,
	`changes` text NOT NULL,
	`changed_by` text NOT NULL,
	`changed_at` text NOT NULL,
	PRIMARY KEY(`policy_id`, `version`),
	FOREIGN KEY (`policy_id`) REFERENCES `policies`(`id`) ON UPDATE no action ON DELETE cascade
);
