import { useCallback, useEffect, useState } from "preact/hooks";
import { api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { DeviceActions } from "../components/device-actions";
import { DeviceActivity } from "../components/device-activity";
import { DeviceCompliance } from "../components/device-compliance";
import { platformLabel } from "../components/device-labels";
import { DevicePhoneProfile, VpnProfileOnlyBadge } from "../components/device-phone";
import { DevicePolicy } from "../components/device-policy";
import { DeviceReport } from "../components/device-report";
import { DeviceWipeProgress, useWipeProgress } from "../components/device-wipe";
import { ErrorNotice, Loading, notify } from "../components/feedback";
import { PageHeader } from "../components/layout";
import { RelativeTime } from "../components/relative-time";
import { StatusBadge } from "../components/status";
import { formatDateTime, humanize } from "../lib/format";
import { Link, useLocation } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

type Device = Schemas["Device"];

/** One device: what it is, whether it complies, its policy, its activity, and what can be done to it. */
export function DevicePage({ params }: PageProps) {
  const id = params.id ?? "";
  const session = useStore(sessionStore);
  const mayWrite = can(session, "devices:write");
  const { query } = useLocation();
  const device = useApi(() => unwrap(api.GET("/api/v1/devices/{id}", { params: { path: { id } } })), [id]);
  // A wipe asked for here, else the device's newest one (after a reload, or asked elsewhere).
  const [requestedWipeId, setRequestedWipeId] = useState<string | null>(null);
  useEffect(() => setRequestedWipeId(null), [id]);
  const latestWipeId = device.data ? (device.data.latest_wipe?.wipe_id ?? null) : undefined;
  const wipeId = requestedWipeId ?? latestWipeId;
  const [logVersion, setLogVersion] = useState(0);
  const refresh = useCallback(() => {
    device.reload();
    setLogVersion((value) => value + 1);
  }, [device.reload]);
  const wipe = useWipeProgress(id, wipeId, (status) => {
    notify(
      status === "completed" ? "The device confirmed the wipe" : `The wipe ${humanize(status).toLowerCase()}`,
    );
    refresh();
  });

  const data = device.data;
  if (!data) {
    const isMissing = device.error?.status === 404;
    return (
      <>
        <PageHeader title={isMissing ? "Device not found" : "Device"} />
        {isMissing ? (
          <p>
            No device of your organization has this address: it may have been deleted.{" "}
            <Link href="/devices">Back to the devices</Link>
          </p>
        ) : (
          <ErrorNotice error={device.error} title="The device could not be loaded" />
        )}
        {device.isLoading ? <Loading label="Loading the device" /> : null}
      </>
    );
  }

  return (
    <>
      <p class="small">
        <Link href="/devices">← Devices</Link>
      </p>
      <PageHeader
        title={data.device_name}
        description={
          <>
            <StatusBadge value={data.status} /> <StatusBadge value={data.compliance.status} />{" "}
            {data.vpn_profile ? (
              <>
                <VpnProfileOnlyBadge />{" "}
              </>
            ) : null}
            {platformLabel(data.platform)} · last seen <RelativeTime value={data.last_seen} />
          </>
        }
      >
        {mayWrite ? (
          <DeviceActions
            device={data}
            isWipePending={wipe.data?.status === "pending"}
            onChanged={refresh}
            onWipeRequested={setRequestedWipeId}
          />
        ) : null}
      </PageHeader>
      <ErrorNotice error={device.error} title="The device could not be refreshed" />
      {data.status === "suspended" ? (
        <div class="notice notice-warn">
          <p>
            <strong>Suspended</strong>
            {data.suspended_reason ? `: ${data.suspended_reason}` : ""}. It has no VPN access until it is
            unsuspended.
          </p>
        </div>
      ) : null}
      {data.status === "wiped" ? (
        <div class="notice">
          <p>
            <strong>Wiped.</strong> Its work profile was erased and it is no longer managed.
            {mayWrite ? " Delete it to remove it from the device list." : ""}
          </p>
        </div>
      ) : null}
      {wipeId ? <DeviceWipeProgress wipe={wipe} /> : null}
      {mayWrite && data.status !== "wiped" && wipe.data && wipe.data.status !== "completed" ? (
        <p class="small">
          A device that will never confirm a wipe (lost, stolen, destroyed) cannot be deleted: <em>Retire</em>{" "}
          removes it, its credentials and its VPN access.
        </p>
      ) : null}
      {data.vpn_profile ? (
        <DevicePhoneProfile
          device={data}
          profile={data.vpn_profile}
          mayWrite={mayWrite}
          onChanged={refresh}
        />
      ) : null}
      <DeviceDetails device={data} />
      <DeviceCompliance report={data.compliance} isVpnProfileOnly={data.vpn_profile !== null} />
      {data.vpn_profile && !data.facts ? null : <DeviceReport device={data} />}
      <DevicePolicy
        deviceId={data.id}
        mayChange={mayWrite && can(session, "policies:read") && data.status !== "wiped"}
        onChanged={refresh}
      />
      <DeviceActivity deviceId={data.id} query={query} version={logVersion} />
    </>
  );
}

function DeviceDetails({ device }: { device: Device }) {
  const certificate = device.certificate;
  // A phone without an agent has no agent version, hardware id or certificate, and reports nothing.
  const isVpnProfileOnly = device.vpn_profile !== null;
  const none = <span class="muted">none: VPN profile only</span>;
  return (
    <section class="card" aria-labelledby="details-title">
      <h2 id="details-title">Details</h2>
      <dl class="details">
        <dt>Status</dt>
        <dd>
          <StatusBadge value={device.status} />
        </dd>
        <dt>Platform</dt>
        <dd>{platformLabel(device.platform)}</dd>
        <dt>OS version</dt>
        <dd>
          {device.os_version ?? (
            <span class="muted">
              {isVpnProfileOnly ? "not reported: nothing on this phone reports back" : "not reported yet"}
            </span>
          )}
        </dd>
        <dt>Agent version</dt>
        <dd>{isVpnProfileOnly ? none : device.agent_version}</dd>
        <dt>User</dt>
        <dd>
          <DeviceOwner userId={device.user_id} />
        </dd>
        <dt>Enrolled</dt>
        <dd>{formatDateTime(device.enrolled_at)}</dd>
        <dt>Last seen</dt>
        <dd>
          {formatDateTime(device.last_seen)} (<RelativeTime value={device.last_seen} />)
        </dd>
        <dt>VPN IP</dt>
        <dd>{device.vpn_ip ?? <span class="muted">none</span>}</dd>
        <dt>VPN public key</dt>
        <dd>
          <code>{device.vpn_public_key}</code>
        </dd>
        <dt>Hardware ID</dt>
        <dd>{isVpnProfileOnly ? none : <code>{device.hardware_id}</code>}</dd>
        <dt>Certificate</dt>
        <dd>
          {certificate ? (
            <>
              Serial <code>{certificate.serial}</code>, issued {formatDateTime(certificate.issued_at)},
              expires {formatDateTime(certificate.expires_at)}{" "}
              {certificate.revoked ? (
                <StatusBadge value="disabled" label={`Revoked ${formatDateTime(certificate.revoked_at)}`} />
              ) : (
                <StatusBadge value="active" label="Valid" />
              )}
            </>
          ) : isVpnProfileOnly ? (
            none
          ) : (
            <span class="muted">none: the agent authenticates with its device token</span>
          )}
        </dd>
      </dl>
    </section>
  );
}

/** Whose device it is: the user's name and email for those who may read users, else their id. */
function DeviceOwner({ userId }: { userId: string | null }) {
  const mayReadUsers = can(useStore(sessionStore), "users:read");
  const user = useApi(
    () =>
      userId && mayReadUsers
        ? unwrap(api.GET("/api/v1/users/{id}", { params: { path: { id: userId } } }))
        : Promise.resolve(undefined),
    [userId, mayReadUsers],
  );
  if (!userId) return <span class="muted">not assigned to a user</span>;
  if (user.data) {
    return (
      <>
        {user.data.name || user.data.email}{" "}
        <span class="muted small">{user.data.name ? user.data.email : ""}</span>
      </>
    );
  }
  return <code>{userId}</code>;
}
