CREATE TABLE "job_leases" (
	"name" text COLLATE "C" PRIMARY KEY NOT NULL,
	"holder" text COLLATE "C" NOT NULL,
	"term" integer NOT NULL,
	"acquired_at" timestamp(3) with time zone NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rate_limit_windows" (
	"key" text COLLATE "C" NOT NULL,
	"window_minute" integer NOT NULL,
	"count" integer NOT NULL,
	CONSTRAINT "rate_limit_windows_pkey" PRIMARY KEY("key","window_minute")
);
