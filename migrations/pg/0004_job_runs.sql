CREATE TABLE "job_runs" (
	"job" text COLLATE "C" PRIMARY KEY NOT NULL,
	"started_at" timestamp(3) with time zone NOT NULL,
	"duration_ms" double precision NOT NULL,
	"outcome" text COLLATE "C" NOT NULL,
	"replica" text COLLATE "C" NOT NULL
);
