import type { ComponentChildren } from "preact";

/**
 * A table that scrolls sideways on a phone (.table-wrap in styles.css: cells keep their words whole, so a
 * table wider than the card scrolls inside it). It is a focusable, named region so keyboard users can
 * scroll it too (a table of plain text has nothing else to focus). The wrapper's `position: relative`
 * makes it the containing block of the visually hidden texts in cells (absolutely positioned): without
 * it they escape the scrolling box and widen the whole page.
 */
export function TableWrap({
  label,
  isLoading,
  children,
}: {
  label: string;
  isLoading?: boolean;
  children: ComponentChildren;
}) {
  return (
    <section
      class="table-wrap"
      aria-label={label}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (WCAG 2.1.1)
      tabIndex={0}
      aria-busy={isLoading}
    >
      {children}
    </section>
  );
}
