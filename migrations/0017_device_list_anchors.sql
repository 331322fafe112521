CREATE TABLE `device_list_anchors` (
	`organization_id` text PRIMARY KEY NOT NULL,
	`list_version` integer NOT NULL,
	`keys` text NOT NULL,
	`updated_at` text NOT NULL
);
