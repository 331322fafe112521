import { useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import type { operations } from "../api/schema";
import { asApiError } from "../lib/api-errors";
import { notify } from "./feedback";

export type Organization = Schemas["Organization"];
export type OrganizationChange = NonNullable<
  operations["patchApiV1OrganizationsCurrent"]["requestBody"]
>["content"]["application/json"];

/**
 * One settings form's save (PATCH /organizations/current): its own error, so that a problem shows in the
 * form that caused it, and a confirmation when it worked.
 */
export function useOrganizationSave(onSaved: (organization: Organization) => void) {
  const [error, setError] = useState<ApiError>();
  const [isBusy, setBusy] = useState(false);
  const save = async (change: OrganizationChange, confirmation: string) => {
    setBusy(true);
    setError(undefined);
    try {
      const organization = await unwrap(api.PATCH("/api/v1/organizations/current", { body: change }));
      notify(confirmation);
      onSaved(organization);
    } catch (failure) {
      setError(asApiError(failure, "Something went wrong"));
    } finally {
      setBusy(false);
    }
  };
  return { error, isBusy, save };
}
