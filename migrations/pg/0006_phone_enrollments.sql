CREATE TABLE "phone_enrollments" (
	"device_id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"key_made_by" text COLLATE "C" NOT NULL,
	"sealed_private_key" text COLLATE "C",
	"key_held_until" text COLLATE "C",
	"profile_fetched_at" timestamp(3) with time zone,
	"delivered_policy_id" text COLLATE "C",
	"delivered_policy_version" integer,
	"delivered_payloads" json,
	"created_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "phone_profile_links" (
	"id" text COLLATE "C" PRIMARY KEY NOT NULL,
	"device_id" text COLLATE "C" NOT NULL,
	"organization_id" text COLLATE "C" NOT NULL,
	"token_hash" text COLLATE "C" NOT NULL,
	"expires_at" timestamp(3) with time zone NOT NULL,
	"used_at" timestamp(3) with time zone,
	"created_at" timestamp(3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "phone_enrollments" ADD CONSTRAINT "phone_enrollments_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "phone_profile_links" ADD CONSTRAINT "phone_profile_links_device_id_devices_id_fk" FOREIGN KEY ("device_id") REFERENCES "public"."devices"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "phone_enrollments_key_held_idx" ON "phone_enrollments" USING btree ("key_held_until");--> statement-breakpoint
CREATE UNIQUE INDEX "phone_profile_links_hash_unique" ON "phone_profile_links" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "phone_profile_links_device_idx" ON "phone_profile_links" USING btree ("device_id");