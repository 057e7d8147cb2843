export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/**
 * The spec's list envelope; next_cursor names the last item whenever more remain: its id, or what `cursorOf` says
 * for items that have none (a table's versions are named by their snapshot id).
 */
export function listBody<T extends { id: string }>(page: Page<T>): object;
export function listBody<T>(page: Page<T>, cursorOf: (item: T) => string): object;
export function listBody<T>(
  page: Page<T>,
  cursorOf: (item: T) => string = (item) => (item as { id: string }).id,
): object {
  const last = page.data[page.data.length - 1];
  return {
    object: 'list',
    data: page.data,
    has_more: page.hasMore,
    next_cursor: page.hasMore && last !== undefined ? cursorOf(last) : null,
  };
}
