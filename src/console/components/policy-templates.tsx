import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError } from "../lib/api-errors";
import { navigate } from "../lib/router";
import type { Loaded } from "../lib/use-api";
import { Dialog } from "./dialog";
import { ErrorNotice, Loading, notify } from "./feedback";
import { Field } from "./form";

type Template = Schemas["PolicyTemplate"];

/** The built-in starting points; with policies:write, each can become a new policy in one step. */
export function PolicyTemplates({
  templates,
  mayWrite,
}: {
  templates: Loaded<{ data: Template[] }>;
  mayWrite: boolean;
}) {
  const [chosen, setChosen] = useState<Template | null>(null);
  return (
    <section aria-labelledby="templates-title">
      <h2 id="templates-title">Templates</h2>
      <p class="muted">Ready-made settings to start a policy from; change anything afterwards.</p>
      <ErrorNotice error={templates.error} title="The templates could not be loaded" />
      {templates.data ? (
        <div class="grid">
          {templates.data.data.map((template) => (
            <article key={template.id} class="card" aria-labelledby={`template-${template.id}`}>
              <h3 id={`template-${template.id}`}>{template.name}</h3>
              <p>{template.description}</p>
              <p class="small">
                <strong>Recommended for:</strong> {template.recommended_for.join(", ")}
              </p>
              {mayWrite ? (
                <button type="button" class="button-secondary" onClick={() => setChosen(template)}>
                  Use this template<span class="visually-hidden"> ({template.name})</span>
                </button>
              ) : null}
            </article>
          ))}
        </div>
      ) : templates.isLoading ? (
        <Loading label="Loading the templates" />
      ) : null}
      <UseTemplateDialog template={chosen} onClose={() => setChosen(null)} />
    </section>
  );
}

/** Asks for the new policy's name, creates it from the template, and opens it. */
function UseTemplateDialog({ template, onClose }: { template: Template | null; onClose: () => void }) {
  const [name, setName] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const [isBusy, setBusy] = useState(false);
  const close = () => {
    setName("");
    setError(undefined);
    onClose();
  };
  const create = async (event: Event) => {
    event.preventDefault();
    if (!template || isBusy) return;
    setError(undefined);
    setBusy(true);
    try {
      const policy = await unwrap(
        api.POST("/api/v1/policies/from-template", { body: { template_id: template.id, name: name.trim() } }),
      );
      notify(`Policy “${policy.name}” created from the ${template.name} template`);
      close();
      navigate(`/policies/${policy.id}`);
    } catch (failure) {
      setError(asApiError(failure));
    } finally {
      setBusy(false);
    }
  };
  // A taken or blank name is the user's to fix, next to the field; anything else is a notice.
  const nameProblem =
    error?.reason === "policy_name_taken"
      ? `${error.body.message}: choose another name`
      : error?.body.errors?.find((problem) => problem.field === "name")?.message;
  return (
    <Dialog
      title={template ? `New policy from ${template.name}` : ""}
      open={template !== null}
      onClose={close}
    >
      <form onSubmit={create} noValidate>
        <p>The policy starts at version 1 with the template's settings. Nothing is assigned to it yet.</p>
        <ErrorNotice error={nameProblem ? undefined : error} title="The policy could not be created" />
        <Field label="Name of the new policy" hint="Unique in your organization." error={nameProblem}>
          {(control) => (
            <input
              {...control}
              class="wide"
              maxLength={200}
              autoComplete="off"
              value={name}
              onInput={(event) => setName(event.currentTarget.value)}
            />
          )}
        </Field>
        <div class="button-row dialog-actions">
          <button type="button" class="button-secondary" onClick={close}>
            Cancel
          </button>
          <button type="submit" disabled={isBusy}>
            {isBusy ? "Creating…" : "Create policy"}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
