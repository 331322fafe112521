CREATE TABLE `gdpr_requests` (
	`id` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`user_id` text NOT NULL,
	`type` text NOT NULL,
	`status` text NOT NULL,
	`requested_by_type` text NOT NULL,
	`requested_by_id` text,
	`processing` text,
	`reason` text,
	`result` text NOT NULL,
	`details` text NOT NULL,
	`created_at` text NOT NULL,
	`completed_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `gdpr_requests_organization_idx` ON `gdpr_requests` (`organization_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `gdpr_requests_user_idx` ON `gdpr_requests` (`user_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `enrollment_tokens` ADD `created_by_user_id` text;--> statement-breakpoint
CREATE INDEX `enrollment_tokens_creator_idx` ON `enrollment_tokens` (`created_by_user_id`);--> statement-breakpoint
ALTER TABLE `users` ADD `device_activity_objected_at` text;--> statement-breakpoint
ALTER TABLE `users` ADD `erased_at` text;--> statement-breakpoint
CREATE INDEX `audit_logs_target_idx` ON `audit_logs` (`organization_id`,`target_id`);--> statement-breakpoint
-- Tokens created before this migration name their creator by label only: an email, or "key name (email)".
UPDATE `enrollment_tokens` SET `created_by_user_id` = (
	SELECT `u`.`id` FROM `users` `u`
	WHERE `u`.`organization_id` = `enrollment_tokens`.`organization_id`
		AND (`enrollment_tokens`.`created_by` = `u`.`email`
			OR substr(`enrollment_tokens`.`created_by`, -length(`u`.`email`) - 3) = ' (' || `u`.`email` || ')')
) WHERE `created_by_user_id` IS NULL;
