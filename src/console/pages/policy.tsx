import { useRef } from "preact/hooks";
import { api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { ErrorNotice, Loading } from "../components/feedback";
import { PageHeader } from "../components/layout";
import { DeletePolicyButton, SetDefaultPolicyButton } from "../components/policy-actions";
import { PolicyDevices } from "../components/policy-devices";
import { PolicyHistory } from "../components/policy-history";
import { PolicySettingsView } from "../components/policy-settings";
import { StatusBadge } from "../components/status";
import { formatDateTime, formatNumber } from "../lib/format";
import { Link, setQuery, useLocation } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

type Policy = Schemas["Policy"];
type Tab = "history" | "devices";

function pageParameter(value: string | null): number {
  const page = Number(value);
  return Number.isInteger(page) && page > 1 ? page : 1;
}

/** One policy: its details and settings, editing, default and deletion, its versions and its devices. */
export function PolicyPage({ params }: PageProps) {
  const id = params.id ?? "";
  const mayWrite = can(useStore(sessionStore), "policies:write");
  const { query } = useLocation();
  const policy = useApi(() => unwrap(api.GET("/api/v1/policies/{id}", { params: { path: { id } } })), [id]);
  // Named in the "set as default" question; a failure here only leaves the name out.
  const defaultPolicy = useApi(
    () => unwrap(api.GET("/api/v1/policies/default")),
    [id, policy.data?.is_default],
  );

  const data = policy.data;
  if (!data) {
    const isMissing = policy.error?.status === 404;
    return (
      <>
        <PageHeader title={isMissing ? "Policy not found" : "Policy"} />
        {isMissing ? (
          <p>
            No policy of your organization has this address: it may have been deleted.{" "}
            <Link href="/policies">All policies</Link>
          </p>
        ) : (
          <ErrorNotice error={policy.error} title="The policy could not be loaded" />
        )}
        {policy.isLoading ? <Loading label="Loading the policy" /> : null}
      </>
    );
  }

  return (
    <>
      <p class="small">
        <Link href="/policies">← Policies</Link>
      </p>
      <PageHeader
        title={data.name}
        description={
          data.is_default ? (
            <>
              <StatusBadge value="default" label="Default" /> The organization default: devices without a
              policy of their own follow it.
            </>
          ) : (
            data.description || undefined
          )
        }
      >
        {mayWrite ? (
          <>
            <Link href={`/policies/${data.id}/edit`} class="button">
              Edit
            </Link>
            {data.is_default ? null : (
              <SetDefaultPolicyButton
                policy={data}
                currentDefault={defaultPolicy.data?.name}
                onDone={policy.reload}
              />
            )}
            <DeletePolicyButton policy={data} />
          </>
        ) : null}
      </PageHeader>
      <ErrorNotice error={policy.error} title="The policy could not be refreshed" />
      <PolicyDetails policy={data} />
      <section class="card" aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <PolicySettingsView data={data.policy_data} />
      </section>
      <PolicyTabs
        policy={data}
        tab={query.get("tab") === "devices" ? "devices" : "history"}
        historyPage={pageParameter(query.get("history_page"))}
        devicesPage={pageParameter(query.get("devices_page"))}
      />
    </>
  );
}

function PolicyDetails({ policy }: { policy: Policy }) {
  return (
    <section class="card" aria-labelledby="details-title">
      <h2 id="details-title">Details</h2>
      <dl class="details">
        <dt>Description</dt>
        <dd>{policy.description || <span class="muted">None</span>}</dd>
        <dt>Version</dt>
        <dd>{policy.version}</dd>
        <dt>Updated</dt>
        <dd>{formatDateTime(policy.updated_at)}</dd>
        <dt>Created</dt>
        <dd>{formatDateTime(policy.created_at)}</dd>
        <dt>Devices</dt>
        <dd>{formatNumber(policy.device_count)}</dd>
        <dt>State</dt>
        <dd>
          <StatusBadge value={policy.active ? "active" : "inactive"} />
        </dd>
        <dt>Organization default</dt>
        <dd>{policy.is_default ? "Yes" : "No"}</dd>
      </dl>
    </section>
  );
}

const TABS: { id: Tab; label: (policy: Policy) => string }[] = [
  { id: "history", label: () => "History" },
  { id: "devices", label: (policy) => `Devices (${formatNumber(policy.device_count)})` },
];

/**
 * History and Devices as tabs (WAI-ARIA tabs pattern: arrow keys move between them, Tab goes into the
 * panel). The tab is in the URL, so a link or Back returns to it.
 */
function PolicyTabs({
  policy,
  tab,
  historyPage,
  devicesPage,
}: {
  policy: Policy;
  tab: Tab;
  historyPage: number;
  devicesPage: number;
}) {
  const tabList = useRef<HTMLDivElement>(null);
  const select = (next: Tab, shouldFocus = false) => {
    setQuery({ tab: next === "history" ? undefined : next });
    if (shouldFocus) tabList.current?.querySelector<HTMLElement>(`#tab-${next}`)?.focus();
  };
  const onKeyDown = (event: KeyboardEvent) => {
    const index = TABS.findIndex((item) => item.id === tab);
    const moves: Record<string, number> = {
      ArrowRight: (index + 1) % TABS.length,
      ArrowLeft: (index - 1 + TABS.length) % TABS.length,
      Home: 0,
      End: TABS.length - 1,
    };
    const target = moves[event.key];
    if (target === undefined) return;
    event.preventDefault();
    const next = TABS[target];
    if (next) select(next.id, true);
  };
  return (
    <section aria-labelledby="activity-title">
      <h2 id="activity-title" class="visually-hidden">
        Versions and devices
      </h2>
      <div
        class="tabs"
        role="tablist"
        aria-label="Policy history and devices"
        ref={tabList}
        onKeyDown={onKeyDown}
      >
        {TABS.map((item) => (
          <button
            key={item.id}
            type="button"
            role="tab"
            id={`tab-${item.id}`}
            aria-selected={tab === item.id}
            // Only the selected tab's panel is in the page; a reference to a missing one would be invalid.
            aria-controls={tab === item.id ? `panel-${item.id}` : undefined}
            tabIndex={tab === item.id ? 0 : -1}
            onClick={() => select(item.id)}
          >
            {item.label(policy)}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`}>
        {tab === "history" ? (
          <PolicyHistory policyId={policy.id} currentVersion={policy.version} page={historyPage} />
        ) : (
          <PolicyDevices
            policyId={policy.id}
            currentVersion={policy.version}
            isDefault={policy.is_default}
            page={devicesPage}
          />
        )}
      </div>
    </section>
  );
}
