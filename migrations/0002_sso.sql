CREATE TABLE `saml_assertions` (
	`organization_id` text NOT NULL,
	`assertion_id` text NOT NULL,
	`expires_at` text NOT NULL,
	PRIMARY KEY(`organization_id`, `assertion_id`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `saml_assertions_expires_idx` ON `saml_assertions` (`expires_at`);--> statement-breakpoint
CREATE TABLE `sso_codes` (
	`code_digest` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`provider` text NOT NULL,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sso_codes_expires_idx` ON `sso_codes` (`expires_at`);--> statement-breakpoint
CREATE TABLE `sso_identities` (
	`organization_id` text NOT NULL,
	`provider` text NOT NULL,
	`issuer` text NOT NULL,
	`subject` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` text NOT NULL,
	`last_sign_in_at` text NOT NULL,
	PRIMARY KEY(`organization_id`, `provider`, `issuer`, `subject`),
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sso_identities_user_idx` ON `sso_identities` (`user_id`);--> statement-breakpoint
CREATE TABLE `sso_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`provider` text NOT NULL,
	`organization_id` text NOT NULL,
	`redirect_uri` text NOT NULL,
	`client_state` text,
	`nonce` text,
	`code_verifier` text,
	`created_at` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `sso_requests_expires_idx` ON `sso_requests` (`expires_at`);