import { useEffect, useRef, useState } from "preact/hooks";
import { type ApiError, api, unwrap } from "../api/client";
import { asApiError } from "../lib/api-errors";
import type { FieldProblem, PolicyDocumentDraft } from "./policy-form-model";

export type PolicyValidation =
  | { status: "unchanged" }
  | { status: "checking" }
  | { status: "valid" }
  | { status: "invalid"; problems: FieldProblem[] }
  | { status: "failed"; error: ApiError };

/** Long enough not to ask on every keystroke, short enough to answer while the user still looks at the field. */
const DEBOUNCE_MS = 400;

/**
 * Checks the document with POST /policies/validate once the user stops editing for a moment, so problems
 * show next to their setting before saving. Only the last answer counts: an earlier, slower one is dropped.
 * `checkNow` checks at once (on save); `report` shows problems that a save answered.
 */
export function usePolicyValidation(draft: PolicyDocumentDraft) {
  const key = JSON.stringify(draft.policyData);
  const [state, setState] = useState<PolicyValidation>({ status: "unchanged" });
  const latest = useRef(0);
  const initialKey = useRef(key);
  const hasEdited = useRef(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  const check = async (policyData: PolicyDocumentDraft["policyData"]): Promise<PolicyValidation> => {
    const request = ++latest.current;
    setState((previous) => (previous.status === "invalid" ? previous : { status: "checking" }));
    let result: PolicyValidation;
    try {
      await unwrap(api.POST("/api/v1/policies/validate", { body: { policy_data: policyData } }));
      result = { status: "valid" };
    } catch (failure) {
      const error = asApiError(failure);
      const problems = error.body.errors ?? [];
      result =
        error.status === 400 && problems.length > 0
          ? { status: "invalid", problems }
          : { status: "failed", error };
    }
    if (request === latest.current) setState(result);
    return result;
  };

  useEffect(() => {
    // A policy as loaded was valid when it was saved: it is checked once the user changes something.
    if (key !== initialKey.current) hasEdited.current = true;
    if (!hasEdited.current) return;
    clearTimeout(timer.current);
    timer.current = setTimeout(() => void check(draft.policyData), DEBOUNCE_MS);
    return () => clearTimeout(timer.current);
  }, [key]);

  return {
    state,
    checkNow: () => {
      clearTimeout(timer.current);
      return check(draft.policyData);
    },
    report: (problems: FieldProblem[]) => {
      latest.current++;
      setState({ status: "invalid", problems });
    },
  };
}
