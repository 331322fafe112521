import { useEffect, useState } from "preact/hooks";
import { type ApiError, api, type Schemas, unwrap } from "../api/client";
import { asApiError } from "../lib/api-errors";
import { can, sessionStore } from "../lib/session";
import { useStore } from "../lib/store";

/** The largest page the API gives. */
const CHOICE_PAGE_SIZE = 100;

export interface Choices<T> {
  items: T[];
  total: number;
  error?: ApiError | undefined;
  isLoading: boolean;
  /** Fetches the next page when there is one (an organization may have thousands of users). */
  loadMore: () => void;
}

function usePagedChoices<T>(
  isAllowed: boolean,
  load: (page: number) => Promise<{ data: T[]; total: number }>,
): Choices<T> {
  const [items, setItems] = useState<T[]>([]);
  const [total, setTotal] = useState(0);
  const [page, setPage] = useState(1);
  const [error, setError] = useState<ApiError | undefined>();
  const [isLoading, setLoading] = useState(isAllowed);
  useEffect(() => {
    if (!isAllowed) return;
    let isCurrent = true;
    setLoading(true);
    load(page).then(
      (answer) => {
        if (!isCurrent) return;
        setItems((previous) => (page === 1 ? answer.data : [...previous, ...answer.data]));
        setTotal(answer.total);
        setError(undefined);
        setLoading(false);
      },
      (failure: unknown) => {
        if (!isCurrent) return;
        setError(asApiError(failure));
        setLoading(false);
      },
    );
    return () => {
      isCurrent = false;
    };
  }, [isAllowed, page]);
  return {
    items,
    total,
    error,
    isLoading,
    loadMore: () => {
      if (!isLoading && items.length < total) setPage(page + 1);
    },
  };
}

export type PolicyChoice = Schemas["PolicyListItem"];
export type UserChoice = Schemas["User"];

/**
 * The policies and users an enrollment token may name, loaded a page at a time and only when the
 * signed-in user may read them; the list of tokens uses them to show names instead of ids.
 */
export function useEnrollmentChoices() {
  const session = useStore(sessionStore);
  const policies = usePagedChoices<PolicyChoice>(can(session, "policies:read"), (page) =>
    unwrap(api.GET("/api/v1/policies", { params: { query: { page, page_size: CHOICE_PAGE_SIZE } } })),
  );
  const users = usePagedChoices<UserChoice>(can(session, "users:read"), (page) =>
    unwrap(api.GET("/api/v1/users", { params: { query: { page, page_size: CHOICE_PAGE_SIZE } } })),
  );
  return { policies, users };
}

export type EnrollmentChoices = ReturnType<typeof useEnrollmentChoices>;

/** "Ada Admin (ada@example.com)", or the email alone when the user has no name. */
export function userLabel(user: UserChoice): string {
  return user.name ? `${user.name} (${user.email})` : user.email;
}
