ALTER TABLE `organizations` ADD `device_list_version` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
CREATE TRIGGER `devices_list_version_delete` AFTER DELETE ON `devices` BEGIN
  UPDATE `organizations` SET `device_list_version` = `device_list_version` + 1 WHERE `id` = old.`organization_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `devices_list_version_update` AFTER UPDATE OF `organization_id`, `enrolled_at`, `id` ON `devices`
WHEN old.`organization_id` IS NOT new.`organization_id` OR old.`enrolled_at` IS NOT new.`enrolled_at`
  OR old.`id` IS NOT new.`id`
BEGIN
  UPDATE `organizations` SET `device_list_version` = `device_list_version` + 1
  WHERE `id` IN (old.`organization_id`, new.`organization_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `devices_list_version_insert` AFTER INSERT ON `devices`
WHEN EXISTS (
  SELECT 1 FROM `devices` d WHERE d.`organization_id` = new.`organization_id`
    AND (d.`enrolled_at`, d.`id`) > (new.`enrolled_at`, new.`id`)
)
BEGIN
  UPDATE `organizations` SET `device_list_version` = `device_list_version` + 1 WHERE `id` = new.`organization_id`;
END;
