-- The kept counts of the SQLite store's triggers (migrations/0009_device_counts.sql and
-- migrations/0010_device_list_version.sql), as plpgsql trigger functions giving the same rows for the
-- same statements (test/db/pg-triggers.test.ts runs the same statements on both stores and compares).
-- Written by hand: drizzle-kit knows nothing of triggers. The triggers keep SQLite's names.
--
-- device_counts: how many devices of an organization are in each status, platform and compliance
-- status; a device leaving a combination takes 1 from it, one entering adds 1 (a row may reach 0).
CREATE FUNCTION devices_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('DELETE', 'UPDATE') THEN
    UPDATE device_counts SET count = count - 1
    WHERE organization_id = OLD.organization_id AND status = OLD.status
      AND platform = OLD.platform AND compliance_status = OLD.compliance_status;
  END IF;
  IF TG_OP IN ('INSERT', 'UPDATE') THEN
    INSERT INTO device_counts (organization_id, status, platform, compliance_status, count)
    VALUES (NEW.organization_id, NEW.status, NEW.platform, NEW.compliance_status, 1)
    ON CONFLICT (organization_id, status, platform, compliance_status)
    DO UPDATE SET count = device_counts.count + 1;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER devices_count_insert AFTER INSERT ON devices
FOR EACH ROW EXECUTE FUNCTION devices_count_change();
--> statement-breakpoint
CREATE TRIGGER devices_count_delete AFTER DELETE ON devices
FOR EACH ROW EXECUTE FUNCTION devices_count_change();
--> statement-breakpoint
-- SQLite's `IS NOT` is PostgreSQL's `IS DISTINCT FROM`.
CREATE TRIGGER devices_count_update
AFTER UPDATE OF organization_id, status, platform, compliance_status ON devices
FOR EACH ROW
WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id OR OLD.status IS DISTINCT FROM NEW.status
  OR OLD.platform IS DISTINCT FROM NEW.platform OR OLD.compliance_status IS DISTINCT FROM NEW.compliance_status)
EXECUTE FUNCTION devices_count_change();
--> statement-breakpoint
-- organizations.device_list_version: bumped when a device leaves its organization's list or changes its
-- place in it (deleted; organization, enrolled_at or id changed), and when one is inserted anywhere but
-- at the head of the list (a device of the organization sorts after it by (enrolled_at, id)).
--
-- The insert's check reads devices, and PostgreSQL allows no subquery in a trigger's WHEN: it is in the
-- function's body. It runs BEFORE the row is inserted: a row-level BEFORE trigger sees the rows that
-- earlier rows of the same statement inserted, as SQLite's AFTER trigger (run as each row is inserted)
-- does; a PostgreSQL AFTER trigger would run once the whole statement is done and also see the rows
-- inserted after this one. (An INSERT ... ON CONFLICT DO NOTHING skipping the row would still bump:
-- harmless, anchors are only found again; nothing inserts devices that way.)
CREATE FUNCTION devices_list_version_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    IF EXISTS (
      SELECT 1 FROM devices d WHERE d.organization_id = NEW.organization_id
        AND (d.enrolled_at, d.id) > (NEW.enrolled_at, NEW.id)
    ) THEN
      UPDATE organizations SET device_list_version = device_list_version + 1 WHERE id = NEW.organization_id;
    END IF;
    RETURN NEW;
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE organizations SET device_list_version = device_list_version + 1
    WHERE id IN (OLD.organization_id, NEW.organization_id);
  ELSE
    UPDATE organizations SET device_list_version = device_list_version + 1 WHERE id = OLD.organization_id;
  END IF;
  RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER devices_list_version_delete AFTER DELETE ON devices
FOR EACH ROW EXECUTE FUNCTION devices_list_version_change();
--> statement-breakpoint
CREATE TRIGGER devices_list_version_update AFTER UPDATE OF organization_id, enrolled_at, id ON devices
FOR EACH ROW
WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id OR OLD.enrolled_at IS DISTINCT FROM NEW.enrolled_at
  OR OLD.id IS DISTINCT FROM NEW.id)
EXECUTE FUNCTION devices_list_version_change();
--> statement-breakpoint
CREATE TRIGGER devices_list_version_insert BEFORE INSERT ON devices
FOR EACH ROW EXECUTE FUNCTION devices_list_version_change();
