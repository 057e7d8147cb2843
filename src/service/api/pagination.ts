export interface Page<T> {
  data: T[];
  hasMore: boolean;
}

/** The spec's list envelope; next_cursor is the id of the last item whenever more remain. */
export function listBody<T extends { id: string }>(page: Page<T>): object {
  const last = page.data[page.data.length - 1];
  return {
    object: 'list',
    data: page.data,
    has_more: page.hasMore,
    next_cursor: page.hasMore && last ? last.id : null,
  };
}
