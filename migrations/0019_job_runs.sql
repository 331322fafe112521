CREATE TABLE `job_runs` (
	`job` text PRIMARY KEY NOT NULL,
	`started_at` text NOT NULL,
	`duration_ms` real NOT NULL,
	`outcome` text NOT NULL,
	`replica` text NOT NULL
);
