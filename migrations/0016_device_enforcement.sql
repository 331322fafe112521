ALTER TABLE `devices` ADD `ignored_facts` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `enforcement` text;--> statement-breakpoint
ALTER TABLE `devices` ADD `enforcement_reported_at` text;