DROP INDEX `policies_organization_name_unique`;--> statement-breakpoint
ALTER TABLE `policies` ADD `name_key` text DEFAULT '' NOT NULL;--> statement-breakpoint
UPDATE `policies` SET `name` = `name` || ' (' || substr(`id`, 1, 8) || ')' WHERE EXISTS (SELECT 1 FROM `policies` AS `earlier` WHERE `earlier`.`organization_id` = `policies`.`organization_id` AND lower(`earlier`.`name`) = lower(`policies`.`name`) AND (`earlier`.`created_at` < `policies`.`created_at` OR (`earlier`.`created_at` = `policies`.`created_at` AND `earlier`.`id` < `policies`.`id`)));--> statement-breakpoint
UPDATE `policy_versions` SET `name` = (SELECT `name` FROM `policies` WHERE `policies`.`id` = `policy_versions`.`policy_id`) WHERE `version` = (SELECT `current_version` FROM `policies` WHERE `policies`.`id` = `policy_versions`.`policy_id`);--> statement-breakpoint
UPDATE `policies` SET `name_key` = lower(`name`);--> statement-breakpoint
CREATE UNIQUE INDEX `policies_organization_name_key_unique` ON `policies` (`organization_id`,`name_key`);
