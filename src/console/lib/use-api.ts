import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { ApiError } from "../api/client";
import { asApiError } from "./api-errors";

export interface Loaded<T> {
  data?: T | undefined;
  error?: ApiError | undefined;
  isLoading: boolean;
  /** Loads again (after a change); the current data stays on screen meanwhile. */
  reload: () => void;
}

/**
 * Runs `load` when the component mounts and whenever `keys` change; an answer that arrives after a
 * newer request started is dropped, so fast filter changes never show a stale page.
 */
export function useApi<T>(load: () => Promise<T>, keys: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiError; isLoading: boolean }>({ isLoading: true });
  const [generation, setGeneration] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const request = ++latest.current;
    setState((previous) => ({ ...previous, isLoading: true }));
    load().then(
      (data) => {
        if (request === latest.current) setState({ data, isLoading: false });
      },
      (error: unknown) => {
        if (request !== latest.current) return;
        setState((previous) => ({ data: previous.data, error: asApiError(error), isLoading: false }));
      },
    );
  }, [...keys, generation]);
  const reload = useCallback(() => setGeneration((value) => value + 1), []);
  return { ...state, reload };
}
