import type { PageProps } from "../app";
import { PageHeader } from "../components/layout";
import { Link } from "../lib/router";

export function NotFoundPage(_: PageProps) {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        There is no such page in the console. <Link href="/">Go to the dashboard</Link>.
      </p>
    </>
  );
}
