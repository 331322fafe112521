CREATE TABLE `device_counts` (
	`organization_id` text NOT NULL,
	`status` text NOT NULL,
	`platform` text NOT NULL,
	`compliance_status` text NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`organization_id`, `status`, `platform`, `compliance_status`)
);
--> statement-breakpoint
INSERT INTO `device_counts` (`organization_id`, `status`, `platform`, `compliance_status`, `count`)
SELECT `organization_id`, `status`, `platform`, `compliance_status`, count(*) FROM `devices`
GROUP BY `organization_id`, `status`, `platform`, `compliance_status`;
--> statement-breakpoint
CREATE TRIGGER `devices_count_insert` AFTER INSERT ON `devices` BEGIN
  INSERT INTO `device_counts` (`organization_id`, `status`, `platform`, `compliance_status`, `count`)
  VALUES (new.`organization_id`, new.`status`, new.`platform`, new.`compliance_status`, 1)
  ON CONFLICT DO UPDATE SET `count` = `count` + 1;
END;
--> statement-breakpoint
CREATE TRIGGER `devices_count_delete` AFTER DELETE ON `devices` BEGIN
  UPDATE `device_counts` SET `count` = `count` - 1
  WHERE `organization_id` = old.`organization_id` AND `status` = old.`status`
    AND `platform` = old.`platform` AND `compliance_status` = old.`compliance_status`;
END;
--> statement-breakpoint
CREATE TRIGGER `devices_count_update`
AFTER UPDATE OF `organization_id`, `status`, `platform`, `compliance_status` ON `devices`
WHEN old.`organization_id` IS NOT new.`organization_id` OR old.`status` IS NOT new.`status`
  OR old.`platform` IS NOT new.`platform` OR old.`compliance_status` IS NOT new.`compliance_status`
BEGIN
  UPDATE `device_counts` SET `count` = `count` - 1
  WHERE `organization_id` = old.`organization_id` AND `status` = old.`status`
    AND `platform` = old.`platform` AND `compliance_status` = old.`compliance_status`;
  INSERT INTO `device_counts` (`organization_id`, `status`, `platform`, `compliance_status`, `count`)
  VALUES (new.`organization_id`, new.`status`, new.`platform`, new.`compliance_status`, 1)
  ON CONFLICT DO UPDATE SET `count` = `count` + 1;
END;
