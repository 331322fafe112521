CREATE TABLE `job_leases` (
	`name` text PRIMARY KEY NOT NULL,
	`holder` text NOT NULL,
	`term` integer NOT NULL,
	`acquired_at` text NOT NULL,
	`expires_at` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `rate_limit_windows` (
	`key` text NOT NULL,
	`window_minute` integer NOT NULL,
	`count` integer NOT NULL,
	PRIMARY KEY(`key`, `window_minute`)
);
