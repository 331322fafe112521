CREATE TABLE `device_cas` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`certificate_pem` text NOT NULL,
	`sealed_private_key` text NOT NULL,
	`created_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE TABLE `device_certificates` (
	`id` text PRIMARY KEY NOT NULL,
	`device_id` text NOT NULL,
	`organization_id` text NOT NULL,
	`serial` text NOT NULL,
	`fingerprint` text NOT NULL,
	`not_before` text NOT NULL,
	`expires_at` text NOT NULL,
	`revoked_at` text,
	`revoked_reason` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`device_id`) REFERENCES `devices`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_certificates_fingerprint_unique` ON `device_certificates` (`fingerprint`);--> statement-breakpoint
CREATE INDEX `device_certificates_device_idx` ON `device_certificates` (`device_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `server_keys` (
	`name` text PRIMARY KEY NOT NULL,
	`public_key` text NOT NULL,
	`sealed_private_key` text NOT NULL,
	`created_at` text NOT NULL
);
