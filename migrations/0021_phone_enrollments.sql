CREATE TABLE `phone_enrollments` (
	`device_id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`key_made_by` text NOT NULL,
	`sealed_private_key` text,
	`key_held_until` text,
	`profile_fetched_at` text,
	`delivered_policy_id` text,
	`delivered_policy_version` integer,
	`delivered_payloads` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `phone_enrollments_key_held_idx` ON `phone_enrollments` (`key_held_until`);--> statement-breakpoint
CREATE TABLE `phone_profile_links` (
	`id` text PRIMARY KEY NOT NULL,
	`device_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`token_hash` text NOT NULL,
	`expires_at` text NOT NULL,
	`used_at` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `phone_profile_links_hash_unique` ON `phone_profile_links` (`token_hash`);--> statement-breakpoint
CREATE INDEX `phone_profile_links_device_idx` ON `phone_profile_links` (`device_id`);