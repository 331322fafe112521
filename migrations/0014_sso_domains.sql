CREATE TABLE `sso_domains` (
	`domain` text PRIMARY KEY NOT NULL,
	`organization_id` text NOT NULL,
	`confirmed_at` text,
	`confirmed_by` text,
	`created_at` text NOT NULL,
	FOREIGN KEY (`organization_id`) REFERENCES `organizations`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sso_domains_organization_idx` ON `sso_domains` (`organization_id`);--> statement-breakpoint
INSERT OR IGNORE INTO `sso_domains` (`domain`, `organization_id`, `confirmed_at`, `confirmed_by`, `created_at`)
SELECT `listed`.`domain`, `listed`.`organization_id`,
  CASE WHEN (SELECT count(*) FROM `organizations`) = 1 THEN strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END,
  CASE WHEN (SELECT count(*) FROM `organizations`) = 1 THEN 'single organization' END,
  strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM (
  SELECT `d`.`value` AS `domain`, `o`.`id` AS `organization_id`, `o`.`created_at` AS `created_at`
    FROM `organizations` AS `o`, json_each(`o`.`sso_settings`, '$.oidc.allowed_domains') AS `d`
  UNION ALL
  SELECT `d`.`value`, `o`.`id`, `o`.`created_at`
    FROM `organizations` AS `o`, json_each(`o`.`sso_settings`, '$.saml.allowed_domains') AS `d`
) AS `listed`
ORDER BY `listed`.`created_at`, `listed`.`organization_id`;
