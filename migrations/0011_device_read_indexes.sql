DROP INDEX `device_certificates_device_idx`;--> statement-breakpoint
CREATE INDEX `device_certificates_device_idx` ON `device_certificates` (`device_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `wipes_device_initiated_idx` ON `wipes` (`device_id`,`initiated_at`);