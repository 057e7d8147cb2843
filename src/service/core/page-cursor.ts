import { LakeServiceError } from './errors.js';

/** Where a page of a newest-first list resumes: the position of the last item of the page before. */
export interface ListPosition {
  created: number;
  id: string;
}

/**
 * The position `starting_after` names in a list, found by `find` (scoped to the caller's organization); a cursor
 * that names nothing there is a 400 naming the parameter. Undefined without a cursor (the first page).
 */
export async function positionAfter(
  startingAfter: string | undefined,
  find: (id: string) => Promise<ListPosition | undefined>,
  list: string,
): Promise<ListPosition | undefined> {
  if (startingAfter === undefined) return undefined;
  const found = await find(startingAfter);
  if (!found)
    throw new LakeServiceError(
      'invalid_cursor',
      `starting_after is not a next_cursor from a previous page of ${list}.`,
      {
        param: 'starting_after',
      },
    );
  return found;
}
