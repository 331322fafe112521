CREATE TABLE "device_list_anchors" (
	"organization_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"list_version" integer NOT NULL,
	"keys" json NOT NULL,
	"updated_at" timestamp(3) with time zone NOT NULL
);
