ALTER TABLE `organizations` ADD `vpn_subnet` text;--> statement-breakpoint
CREATE UNIQUE INDEX `organizations_vpn_subnet_unique` ON `organizations` (`vpn_subnet`);