CREATE TABLE `mfa_challenges` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`kind` text NOT NULL,
	`token_digest` text,
	`webauthn_challenge` text,
	`failures` integer DEFAULT 0 NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mfa_challenges_token_unique` ON `mfa_challenges` (`token_digest`);--> statement-breakpoint
CREATE INDEX `mfa_challenges_user_idx` ON `mfa_challenges` (`user_id`,`kind`);--> statement-breakpoint
CREATE INDEX `mfa_challenges_expires_idx` ON `mfa_challenges` (`expires_at`);--> statement-breakpoint
CREATE TABLE `mfa_methods` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`type` text NOT NULL,
	`name` text NOT NULL,
	`secret` text,
	`last_time_step` integer,
	`credential_id` text,
	`public_key` text,
	`sign_count` integer DEFAULT 0 NOT NULL,
	`transports` text,
	`confirmed_at` text,
	`created_at` text NOT NULL,
	`last_used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `mfa_methods_user_idx` ON `mfa_methods` (`user_id`);--> statement-breakpoint
CREATE UNIQUE INDEX `mfa_methods_credential_unique` ON `mfa_methods` (`credential_id`);--> statement-breakpoint
CREATE TABLE `recovery_codes` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`code_digest` text NOT NULL,
	`created_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `recovery_codes_user_idx` ON `recovery_codes` (`user_id`);--> statement-breakpoint
ALTER TABLE `organizations` ADD `require_mfa` integer DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE `sessions` ADD `sign_in_method` text DEFAULT 'password' NOT NULL;--> statement-breakpoint
ALTER TABLE `users` ADD `mfa_enabled` integer DEFAULT false NOT NULL;