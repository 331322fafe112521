import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError, fieldError, formError } from "../lib/api-errors";
import { formatDateTime, formatNumber } from "../lib/format";
import { type Loaded, useApi } from "../lib/use-api";
import { CopyField } from "./copy";
import { ErrorNotice, Loading } from "./feedback";
import { Checkbox, Field } from "./form";
import { type Choices, type EnrollmentChoices, userLabel } from "./integration-choices";
import { shortId } from "./integration-labels";

export type CreatedToken = Schemas["CreatedEnrollmentToken"];

const FIELDS = ["expires_in_hours", "max_uses", "policy_id", "user_id"];

/**
 * Fetches the agent (this server's executable) and checks it against `sha256`, the digest this page
 * read through the administrator's own session: a digest fetched beside the file, from the same server,
 * would be swapped with it by whoever can swap the file. Without a digest (a server run from source has
 * no executable to offer) the check is left out, and the page says why.
 */
export function agentDownloadCommand(origin: string, sha256: string | null): string {
  const fetchIt = `curl -fsSLo bulwark ${origin}/api/v1/agent/download`;
  return sha256
    ? [fetchIt, `echo "${sha256}  bulwark" | sha256sum -c && chmod +x bulwark`].join("\n")
    : `${fetchIt} && chmod +x bulwark`;
}

/**
 * Fetches the Windows agent in PowerShell and checks it against `sha256`, read by this page as for
 * Linux: a file that differs is removed, so the next command finds nothing to run. PowerShell's `-ne`
 * ignores case (Get-FileHash prints the digest in capitals).
 */
export function windowsDownloadCommand(origin: string, sha256: string): string {
  return [
    `Invoke-WebRequest -UseBasicParsing -OutFile bulwark.exe "${origin}/api/v1/agent/download?os=windows&arch=x64"`,
    `if ((Get-FileHash bulwark.exe -Algorithm SHA256).Hash -ne "${sha256}") { Remove-Item bulwark.exe; throw "bulwark.exe is not the file this server offers: removed" }`,
  ].join("\n");
}

/** The digests of the two macOS builds, each null when the server offers no such file. */
export interface MacosDigests {
  arm64: string | null;
  x64: string | null;
}

/**
 * Fetches the macOS agent for this Mac's processor (`uname -m`: arm64 on Apple silicon, x86_64 on
 * Intel) and checks it against that build's digest, read by this page as for Linux (macOS has
 * `shasum`, not `sha256sum`). A processor the server offers no build for says so and leaves `arch` and
 * the digest empty: the server refuses the empty arch (400), curl -f stops, and the check fails.
 */
export function macosDownloadCommand(origin: string, sha256: MacosDigests): string {
  const cases = [
    sha256.arm64 ? `arm64) arch=arm64 sha256=${sha256.arm64} ;;` : null,
    sha256.x64 ? `x86_64) arch=x64 sha256=${sha256.x64} ;;` : null,
    `*) echo "this server offers no macOS agent for $(uname -m)" >&2 ;;`,
  ].filter((line) => line !== null);
  return [
    `arch= sha256=; case "$(uname -m)" in ${cases.join(" ")} esac`,
    `curl -fsSLo bulwark "${origin}/api/v1/agent/download?os=macos&arch=$arch"`,
    `echo "$sha256  bulwark" | shasum -a 256 -c && chmod +x bulwark`,
  ].join("\n");
}

/** Whether the host is this machine: plain http there crosses no network. */
function isLoopbackHost(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname);
}

/**
 * `agent enroll`'s flags besides the server and the token: the server's CA pinned by its SHA-256 over
 * https when Bulwark serves TLS itself (`caSha256`); over plain http to another machine,
 * --insecure-http, which the page explains beside it.
 */
function enrollFlags(origin: string, token: string, caSha256: string | null): string {
  const url = new URL(origin);
  const extra =
    url.protocol === "http:" && !isLoopbackHost(url.hostname)
      ? " --insecure-http"
      : url.protocol === "https:" && caSha256
        ? ` --ca-sha256 ${caSha256}`
        : "";
  return `--server ${origin} --token ${token}${extra}`;
}

/** Enrolls the machine with the agent fetched by agentDownloadCommand (see enrollFlags). */
export function agentEnrollCommand(origin: string, token: string, caSha256: string | null = null): string {
  return `sudo ./bulwark agent enroll ${enrollFlags(origin, token, caSha256)}`;
}

/**
 * Enrolls a Windows machine with the agent fetched by windowsDownloadCommand, from an elevated
 * PowerShell, and installs it as a service.
 */
export function windowsEnrollCommand(origin: string, token: string, caSha256: string | null = null): string {
  return [
    `.\\bulwark.exe agent enroll ${enrollFlags(origin, token, caSha256)}`,
    ".\\bulwark.exe agent install-service",
  ].join("\n");
}

/** Enrolls a Mac with the agent fetched by macosDownloadCommand and installs it as a service. */
export function macosEnrollCommand(origin: string, token: string, caSha256: string | null = null): string {
  return [agentEnrollCommand(origin, token, caSha256), "sudo ./bulwark agent install-service"].join("\n");
}

/**
 * What this page reads from the server before showing the commands: the digests of the Linux, Windows
 * and macOS agents and of the server's CA (each null when there is none), and when there is no Windows
 * or no macOS agent, what the server says about it.
 */
interface Digests {
  agent: string | null;
  windowsAgent: string | null;
  windowsUnavailable: string | null;
  macosAgents: MacosDigests;
  macosUnavailable: string | null;
  serverCa: string | null;
}

function useDigests(origin: string): Loaded<Digests> {
  return useApi(async () => {
    const digestOf = async (answer: Response) => (await answer.text()).split(/\s+/)[0] ?? null;
    /** The digest of the agent `query` names, or the server's words on why it has none. */
    const read = async (query: string) => {
      const answer = await fetch(`${origin}/api/v1/agent/download.sha256${query}`);
      if (answer.ok) return { sha256: await digestOf(answer), unavailable: null };
      const unavailable = await answer
        .json()
        .then((body: { details?: string }) => body.details ?? null)
        .catch(() => null);
      return { sha256: null, unavailable };
    };
    const [linux, windows, macosArm64, macosX64] = await Promise.all([
      read(""),
      read("?os=windows&arch=x64"),
      read("?os=macos&arch=arm64"),
      read("?os=macos&arch=x64"),
    ]);
    const serverCa = origin.startsWith("https:")
      ? await fetch(`${origin}/api/v1/agent/server-ca`).then((answer) =>
          answer.ok ? answer.headers.get("x-bulwark-sha256") : null,
        )
      : null;
    return {
      agent: linux.sha256,
      windowsAgent: windows.sha256,
      windowsUnavailable: windows.unavailable,
      macosAgents: { arm64: macosArm64.sha256, x64: macosX64.sha256 },
      macosUnavailable:
        [macosArm64.unavailable, macosX64.unavailable].filter((details) => details !== null).join("; ") ||
        null,
      serverCa,
    };
  }, [origin]);
}

type PolicyData = Schemas["PolicyData"];

/** What the Linux agent changes on a machine that follows `data`, and what it only checks, in words. */
export function linuxEnforcement(data: PolicyData): { enforced: string[]; checked: string[] } {
  const enforced: string[] = ["the WireGuard tunnel to this server is brought up"];
  const checked: string[] = [];
  if (!data.usb.allowed && !data.usb.audit_only)
    enforced.push(
      "USB devices are blocked but for the whitelist and the allowed classes (usbguard must be installed and running)",
    );
  if (!data.storage.external_storage_allowed) enforced.push("USB storage drivers cannot load");
  if (data.network.blocked_domains.length > 0)
    enforced.push(
      `${data.network.blocked_domains.length} blocked domain${data.network.blocked_domains.length === 1 ? "" : "s"} in /etc/hosts (exact names; wildcards are not blocked)`,
    );
  const workPaths = data.wipe?.work_paths ?? [];
  enforced.push(
    workPaths.length > 0
      ? `a wipe erases ${workPaths.join(", ")}`
      : "a wipe erases no files (the policy names no work paths)",
  );
  if (data.storage.encryption_required) checked.push("disk encryption");
  if (data.network.vpn_required) checked.push("the tunnel being connected");
  return { enforced, checked };
}

/**
 * The command a Linux device runs to enroll itself (docs/agent-api.md): its host name as the device
 * name and its machine id as the stable hardware id. The JSON body stays in single quotes, broken over
 * lines only between members so it reads in the box; just the two command substitutions step outside
 * the quotes.
 */
export function enrollCommand(origin: string, token: string): string {
  return [
    `curl -X POST ${origin}/api/v1/devices/enroll \\`,
    `  -H 'content-type: application/json' \\`,
    `  -d '{"enrollment_token":"${token}",`,
    `  "device_name":"'$(hostname)'","platform":"linux",`,
    `  "agent_version":"1.0.0","hardware_id":"'$(cat /etc/machine-id)'"}'`,
  ].join("\n");
}

/** The form that creates an enrollment token: lifetime, how many devices, and optionally a policy and a user. */
export function EnrollmentTokenForm({
  choices,
  onCreated,
}: {
  choices: EnrollmentChoices;
  onCreated: (token: CreatedToken) => void;
}) {
  const [hours, setHours] = useState("168");
  const [maxUses, setMaxUses] = useState("1");
  const [isUnlimited, setUnlimited] = useState(false);
  const [policyId, setPolicyId] = useState("");
  const [userId, setUserId] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const [isBusy, setBusy] = useState(false);
  const { policies, users } = choices;

  const submit = async (event: Event) => {
    event.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      const token = await unwrap(
        api.POST("/api/v1/enrollment-tokens", {
          body: {
            expires_in_hours: Number(hours),
            max_uses: isUnlimited ? null : Number(maxUses),
            ...(policyId ? { policy_id: policyId } : {}),
            ...(userId ? { user_id: userId } : {}),
          },
        }),
      );
      onCreated(token);
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} aria-labelledby="new-token">
      <h2 id="new-token">Create a token</h2>
      <ErrorNotice error={formError(error, FIELDS)} title="The token could not be created" />
      <div class="filters">
        <Field
          label="Expires after (hours)"
          hint="1 to 8760; 168 is a week."
          error={fieldError(error, "expires_in_hours")}
        >
          {(control) => (
            <input
              {...control}
              type="number"
              inputMode="numeric"
              min={1}
              max={8760}
              step={1}
              required
              value={hours}
              onInput={(event) => setHours(event.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          label="Devices it may enroll"
          hint="Each enrollment uses it once."
          error={fieldError(error, "max_uses")}
        >
          {(control) => (
            <input
              {...control}
              type="number"
              inputMode="numeric"
              min={1}
              max={1_000_000}
              step={1}
              required={!isUnlimited}
              disabled={isUnlimited}
              value={isUnlimited ? "" : maxUses}
              onInput={(event) => setMaxUses(event.currentTarget.value)}
            />
          )}
        </Field>
      </div>
      <Checkbox
        label="Unlimited devices"
        hint="Until it expires or is revoked: for enrolling a whole batch of devices."
        checked={isUnlimited}
        onChange={setUnlimited}
      />
      <div class="filters">
        <ChoiceSelect
          label="Policy (optional)"
          hint="Devices enrolled with it follow this policy."
          noun="policies"
          noneLabel="The organization default"
          choices={policies}
          value={policyId}
          error={fieldError(error, "policy_id")}
          optionLabel={(policy) => `${policy.name}${policy.is_default ? " (the default)" : ""}`}
          onChange={setPolicyId}
        />
        <ChoiceSelect
          label="User (optional)"
          hint="Devices enrolled with it are assigned to this user."
          noun="users"
          noneLabel="Nobody"
          choices={users}
          value={userId}
          error={fieldError(error, "user_id")}
          optionLabel={userLabel}
          onChange={setUserId}
        />
      </div>
      <div class="button-row">
        <button type="submit" disabled={isBusy}>
          {isBusy ? "Creating…" : "Create token"}
        </button>
      </div>
    </form>
  );
}

/**
 * A select among policies or users, loaded a page at a time ("List more" for the next page); not shown
 * when the signed-in user may not read them (nothing loads then).
 */
export function ChoiceSelect<T extends { id: string }>({
  label,
  hint,
  noun,
  noneLabel,
  choices,
  value,
  error,
  optionLabel,
  onChange,
}: {
  label: string;
  hint: string;
  noun: string;
  noneLabel: string;
  choices: Choices<T>;
  value: string;
  error?: string | undefined;
  optionLabel: (item: T) => string;
  onChange: (id: string) => void;
}) {
  if (!choices.isLoading && choices.items.length === 0 && !choices.error) return null;
  const hasMore = choices.total > choices.items.length;
  return (
    <div>
      <ErrorNotice error={choices.error} title={`The ${noun} could not be loaded`} />
      <Field
        label={label}
        hint={
          hasMore
            ? `${hint} ${formatNumber(choices.items.length)} of ${formatNumber(choices.total)} ${noun} listed.`
            : hint
        }
        error={error}
      >
        {(control) => (
          <select {...control} value={value} onChange={(event) => onChange(event.currentTarget.value)}>
            <option value="">{noneLabel}</option>
            {choices.items.map((item) => (
              <option key={item.id} value={item.id}>
                {optionLabel(item)}
              </option>
            ))}
          </select>
        )}
      </Field>
      {hasMore ? (
        <button type="button" class="button-link" disabled={choices.isLoading} onClick={choices.loadMore}>
          List more {noun}
        </button>
      ) : null}
    </div>
  );
}

/** The new token, shown this once, with the command that enrolls a device with it. */
export function EnrollmentTokenCreated({ token, onDone }: { token: CreatedToken; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const digests = useDigests(location.origin);
  const isPlainHttpAcrossNetwork = location.protocol === "http:" && !isLoopbackHost(location.hostname);
  // Move focus to the result so keyboard and screen reader users land on what they must copy.
  useEffect(() => heading.current?.focus(), []);
  const uses =
    token.max_uses === null
      ? "any number of devices"
      : `${formatNumber(token.max_uses)} ${token.max_uses === 1 ? "device" : "devices"}`;
  return (
    <section aria-labelledby="token-created">
      <h2 id="token-created" ref={heading} tabIndex={-1}>
        Token created
      </h2>
      <div class="notice notice-warn">
        <strong>Copy it now: it won't be shown again.</strong>
        <p>
          It enrolls {uses} until {formatDateTime(token.expires_at)}. Anyone who has it can enroll a device,
          so share it only with the device's owner.
        </p>
      </div>
      <CopyField label="Enrollment token" value={token.token} isCode />
      <p class="muted small">Enroll a Linux machine with the agent: run both commands on it.</p>
      {digests.isLoading ? (
        <Loading label="Reading the agent's digest" />
      ) : (
        <>
          <CopyField
            label="1. Fetch the agent"
            value={agentDownloadCommand(location.origin, digests.data?.agent ?? null)}
            isCode
          />
          <p class="muted small">
            {digests.data?.agent
              ? "The command checks the file against its SHA-256, read by this page through your own session: a file changed on the way is refused."
              : "This server offers no agent to download (it runs from source: npm run build, then serve dist/bulwark), so there is no digest to check it against."}
          </p>
          <CopyField
            label="2. Enroll with the agent"
            value={agentEnrollCommand(location.origin, token.token, digests.data?.serverCa ?? null)}
            isCode
          />
          <p class="muted small">
            Enroll a Windows machine with the agent: run both in PowerShell as Administrator.
          </p>
          {digests.data?.windowsAgent ? (
            <>
              <CopyField
                label="1. Fetch bulwark.exe"
                value={windowsDownloadCommand(location.origin, digests.data.windowsAgent)}
                isCode
              />
              <p class="muted small">
                The second line checks the file against its SHA-256, read by this page through your own
                session, and removes a file changed on the way.
              </p>
              <CopyField
                label="2. Enroll with bulwark.exe and install its service"
                value={windowsEnrollCommand(location.origin, token.token, digests.data.serverCa)}
                isCode
              />
            </>
          ) : (
            <div class="notice" role="note">
              This server offers no Windows agent:{" "}
              {digests.data?.windowsUnavailable ??
                "npm run build makes dist/bulwark-windows-x64.exe, which the server serves from beside its executable"}
              .
            </div>
          )}
          <p class="muted small">Enroll a Mac with the agent: run both in Terminal.</p>
          {digests.data?.macosAgents.arm64 || digests.data?.macosAgents.x64 ? (
            <>
              <CopyField
                label="1. Fetch the macOS agent for this Mac's processor"
                value={macosDownloadCommand(location.origin, digests.data.macosAgents)}
                isCode
              />
              <p class="muted small">
                The last line checks the file against the SHA-256 of its build, read by this page through your
                own session: a file changed on the way is refused.
                {digests.data.macosAgents.arm64 && digests.data.macosAgents.x64
                  ? ""
                  : ` This server offers no build for ${digests.data.macosAgents.arm64 ? "Intel" : "Apple silicon"} Macs: ${digests.data.macosUnavailable ?? "npm run build makes both"}.`}
              </p>
              <CopyField
                label="2. Enroll the Mac and install its service"
                value={macosEnrollCommand(location.origin, token.token, digests.data.serverCa)}
                isCode
              />
            </>
          ) : (
            <div class="notice" role="note">
              This server offers no macOS agent:{" "}
              {digests.data?.macosUnavailable ??
                "npm run build makes dist/bulwark-darwin-arm64 and dist/bulwark-darwin-x64, which the server serves from beside its executable"}
              .
            </div>
          )}
          {isPlainHttpAcrossNetwork ? (
            <div class="notice notice-warn" role="note">
              This server is plain http: the device's token, its policies and wipe commands will cross the
              network unprotected, which is why the commands say --insecure-http. Serve Bulwark over https
              (server.tls_cert, or a proxy in front).
            </div>
          ) : null}
          {digests.data?.serverCa ? (
            <p class="muted small">
              --ca-sha256 pins this server's certificate authority: the agent trusts only the CA with that
              SHA-256.
            </p>
          ) : null}
        </>
      )}
      <PolicyAtEnrollment policyId={token.policy_id} />
      <details>
        <summary>Without the agent: enroll with curl</summary>
        <CopyField
          label="Enroll command (Linux)"
          value={enrollCommand(location.origin, token.token)}
          isCode
        />
        <p class="muted small">
          It sends the device's host name and its machine id (from /etc/machine-id) and answers with the
          device token an agent uses from then on. Other platforms send the same request with their own
          platform and a stable hardware id.
        </p>
      </details>
      <div class="button-row">
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
    </section>
  );
}

/** What a device enrolled with the token follows from the start, and what the Linux agent does with it. */
function PolicyAtEnrollment({ policyId }: { policyId: string | null }) {
  const policy = useApi(
    () =>
      policyId
        ? unwrap(api.GET("/api/v1/policies/{id}", { params: { path: { id: policyId } } }))
        : unwrap(api.GET("/api/v1/policies/default", {})),
    [policyId],
  );
  if (!policy.data) return null;
  const { enforced, checked } = linuxEnforcement(policy.data.policy_data);
  return (
    <section class="stack" aria-labelledby="policy-at-enrollment">
      <h3 id="policy-at-enrollment">At enrollment: {policy.data.name}</h3>
      <p class="muted small">On a Linux machine the agent then enforces:</p>
      <ul>
        {enforced.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
      {checked.length > 0 ? (
        <p class="muted small">It checks and reports, without changing: {checked.join(", ")}.</p>
      ) : null}
    </section>
  );
}

/** Names a token's user and policy from the choices loaded for the form; an id when the name isn't loaded. */
export function ownerNames(
  choices: EnrollmentChoices,
  token: { user_id: string | null; policy_id: string | null },
) {
  const user = token.user_id ? choices.users.items.find((item) => item.id === token.user_id) : undefined;
  const policy = token.policy_id
    ? choices.policies.items.find((item) => item.id === token.policy_id)
    : undefined;
  return {
    user: token.user_id ? (user ? userLabel(user) : `User ${shortId(token.user_id)}`) : null,
    policy: token.policy_id ? (policy ? policy.name : `Policy ${shortId(token.policy_id)}`) : null,
  };
}
