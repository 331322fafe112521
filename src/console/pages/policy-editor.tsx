import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import type { PageProps } from "../app";
import { ErrorNotice, Loading, notify } from "../components/feedback";
import { PageHeader } from "../components/layout";
import { PolicyErrorSummary, PolicyFormFields, sortProblems } from "../components/policy-form";
import {
  type FieldProblem,
  type PolicyFormValues,
  placeProblem,
  toFormValues,
  toPolicyDocument,
} from "../components/policy-form-model";
import type { PolicyData } from "../components/policy-settings";
import { type PolicyValidation, usePolicyValidation } from "../components/policy-validation";
import { asApiError } from "../lib/api-errors";
import { Link, navigate } from "../lib/router";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";
import { useApi } from "../lib/use-api";

type Policy = Schemas["Policy"];

/** /policies/new and /policies/:id/edit: every setting of a policy, checked with the server as it is edited. */
export function PolicyEditorPage({ params }: PageProps) {
  const mayWrite = can(useStore(sessionStore), "policies:write");
  const id = params.id;
  if (!mayWrite) {
    return (
      <>
        <PageHeader title={id ? "Edit policy" : "New policy"} />
        <div class="notice notice-warn">
          <p>
            Your role can view policies but not change them: ask an administrator or operator.{" "}
            <Link href={id ? `/policies/${id}` : "/policies"}>Back</Link>
          </p>
        </div>
      </>
    );
  }
  return id ? <EditPolicy id={id} /> : <NewPolicy />;
}

/** A new policy starts from the balanced template's settings, the defaults the server fills in too. */
function NewPolicy() {
  const templates = useApi(() => unwrap(api.GET("/api/v1/policies/templates")), []);
  const balanced = templates.data?.data.find((template) => template.id === "balanced");
  if (!balanced) {
    return (
      <>
        <PageHeader title="New policy" />
        <ErrorNotice error={templates.error} title="The starting settings could not be loaded" />
        {templates.isLoading ? <Loading label="Loading the starting settings" /> : null}
      </>
    );
  }
  return <PolicyEditor startingData={balanced.policy_data} />;
}

function EditPolicy({ id }: { id: string }) {
  const policy = useApi(() => unwrap(api.GET("/api/v1/policies/{id}", { params: { path: { id } } })), [id]);
  const data = policy.data;
  if (!data) {
    return (
      <>
        <PageHeader title={policy.error?.status === 404 ? "Policy not found" : "Edit policy"} />
        <ErrorNotice error={policy.error} title="The policy could not be loaded" />
        {policy.error?.status === 404 ? (
          <p>
            It may have been deleted. <Link href="/policies">All policies</Link>
          </p>
        ) : null}
        {policy.isLoading ? <Loading label="Loading the policy" /> : null}
      </>
    );
  }
  // A reload after a conflict brings a new version: the form starts again from it.
  return (
    <PolicyEditor
      key={`${data.id}-${data.version}`}
      policy={data}
      startingData={data.policy_data}
      onReload={policy.reload}
    />
  );
}

function PolicyEditor({
  policy,
  startingData,
  onReload,
}: {
  policy?: Policy;
  startingData: PolicyData;
  onReload?: () => void;
}) {
  const [name, setName] = useState(policy?.name ?? "");
  const [description, setDescription] = useState(policy?.description ?? "");
  const [values, setValues] = useState<PolicyFormValues>(() => toFormValues(startingData));
  const draft = useMemo(() => toPolicyDocument(values), [values]);
  const validation = usePolicyValidation(draft);
  // Problems with the name and description come only from a save: /validate checks the settings.
  const [detailProblems, setDetailProblems] = useState<FieldProblem[]>([]);
  const [saveError, setSaveError] = useState<ApiError | undefined>();
  const [conflict, setConflict] = useState<ApiError | undefined>();
  const [isSaving, setSaving] = useState(false);
  const summaryRef = useRef<HTMLElement>(null);
  const [summaryFocus, setSummaryFocus] = useState(0);
  useEffect(() => {
    if (summaryFocus > 0) summaryRef.current?.focus();
  }, [summaryFocus]);

  const documentProblems = validation.state.status === "invalid" ? validation.state.problems : [];
  const problems = sortProblems(
    [...detailProblems, ...documentProblems].map((problem) => placeProblem(problem, draft.lines)),
  );

  const setSetting = (path: string, value: boolean | string) =>
    setValues((previous) => ({
      ...previous,
      [path]: value,
      // Without sharing there is no direction: the server requires none, so the user never has to pick it.
      ...(path === "dlp.clipboard_sharing" && value === false ? { "dlp.clipboard_direction": "none" } : {}),
    }));

  const save = async (event: Event) => {
    event.preventDefault();
    if (isSaving) return;
    setSaveError(undefined);
    setConflict(undefined);
    setSaving(true);
    try {
      const checked = await validation.checkNow();
      if (checked.status === "invalid") {
        setSummaryFocus((count) => count + 1);
        return;
      }
      const body = { name: name.trim(), description: description.trim(), policy_data: draft.policyData };
      const saved = policy
        ? await unwrap(
            api.PUT("/api/v1/policies/{id}", {
              params: { path: { id: policy.id } },
              body: { ...body, expected_version: policy.version },
            }),
          )
        : await unwrap(api.POST("/api/v1/policies", { body }));
      notify(
        !policy
          ? `Policy “${saved.name}” created`
          : saved.version === policy.version
            ? "Nothing changed: the policy stays at its current version"
            : `Policy “${saved.name}” saved as version ${saved.version}`,
      );
      navigate(`/policies/${saved.id}`);
    } catch (failure) {
      const error = asApiError(failure);
      const fieldProblems = error.body.errors ?? [];
      if (error.reason === "policy_version_mismatch") {
        setConflict(error);
      } else if (error.reason === "policy_name_taken") {
        setDetailProblems([{ field: "name", message: `${error.body.message}: choose another name` }]);
        setSummaryFocus((count) => count + 1);
      } else if (error.status === 400 && fieldProblems.length > 0) {
        validation.report(fieldProblems.filter((problem) => problem.field.startsWith("policy_data")));
        setDetailProblems(fieldProblems.filter((problem) => !problem.field.startsWith("policy_data")));
        setSummaryFocus((count) => count + 1);
      } else {
        setSaveError(error);
      }
    } finally {
      setSaving(false);
    }
  };

  const backTo = policy ? `/policies/${policy.id}` : "/policies";
  return (
    <>
      <p class="small">
        <Link href={backTo}>← {policy ? policy.name : "Policies"}</Link>
      </p>
      <PageHeader
        title={policy ? `Edit ${policy.name}` : "New policy"}
        description={
          policy
            ? `Version ${policy.version}. Saving creates version ${policy.version + 1}; devices receive it at their next check-in.`
            : "It starts with the settings of the Balanced template. Each change is checked as you make it."
        }
      />
      {conflict && onReload ? <ConflictNotice conflict={conflict} onReload={onReload} /> : null}
      <ErrorNotice error={saveError} title="The policy could not be saved" />
      <PolicyErrorSummary problems={problems} summaryRef={summaryRef} />
      <form onSubmit={save} noValidate aria-label={policy ? `Edit ${policy.name}` : "New policy"}>
        <PolicyFormFields
          name={name}
          description={description}
          values={values}
          problems={problems}
          onName={(value) => {
            setName(value);
            setDetailProblems((previous) => previous.filter((problem) => problem.field !== "name"));
          }}
          onDescription={(value) => {
            setDescription(value);
            setDetailProblems((previous) => previous.filter((problem) => problem.field !== "description"));
          }}
          onSetting={setSetting}
        />
        {validation.state.status === "failed" ? (
          <ErrorNotice error={validation.state.error} title="The settings could not be checked" />
        ) : null}
        <ValidationStatus validation={validation.state} />
        <div class="button-row">
          <button type="submit" disabled={isSaving}>
            {isSaving ? "Saving…" : policy ? "Save changes" : "Create policy"}
          </button>
          <Link href={backTo} class="button button-secondary">
            Cancel
          </Link>
        </div>
      </form>
    </>
  );
}

/** Where the check as you type stands, read out politely by screen readers. */
function ValidationStatus({ validation }: { validation: PolicyValidation }) {
  const text =
    validation.status === "checking"
      ? "Checking the settings…"
      : validation.status === "valid"
        ? "✓ The settings are valid."
        : validation.status === "invalid"
          ? `⚠ ${validation.problems.length === 1 ? "1 problem" : `${validation.problems.length} problems`} to fix: see the list at the top.`
          : validation.status === "failed"
            ? ""
            : "Each change is checked with the server as you make it.";
  return (
    <p role="status" class="muted small">
      {text}
    </p>
  );
}

/** Someone saved a newer version meanwhile: saving over it would lose their change without anyone seeing it. */
function ConflictNotice({ conflict, onReload }: { conflict: ApiError; onReload: () => void }) {
  return (
    <div class="notice notice-warn" role="alert">
      <p>
        <strong>Someone else changed this policy while you were editing it.</strong>
      </p>
      <p>
        {conflict.body.details ? `${conflict.body.details}. ` : ""}Reload to see the latest version, then make
        your changes again: reloading discards the changes on this page.
      </p>
      <div class="button-row">
        <button
          type="button"
          onClick={() => {
            onReload();
            notify("Loaded the latest version");
          }}
        >
          Reload the latest version
        </button>
      </div>
    </div>
  );
}
