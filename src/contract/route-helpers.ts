/** Pieces every route group's entries share. */
import { type ResponseHeader } from './route.js';
import { pageQuery, Type, type TSchema } from './schema.js';

export const id = (description: string) => Type.Object({ id: Type.String({ minLength: 1, description }) });
export const page = (defaultLimit = 20, max = 100) => Type.Object(pageQuery(defaultLimit, max));
/** Every paged route refuses an empty or foreign cursor with invalid_cursor. */
export const cursorErrors = { starting_after: 'invalid_cursor' } as const;
export const json = <S extends TSchema>(description: string, schema: S, headers?: readonly ResponseHeader[]) => ({
  description,
  schema,
  ...(headers ? { headers } : {}),
});
export const events = {
  description: 'Server-Sent Events (see the event schemas); 204 when there is nothing left to send.',
  contentType: 'text/event-stream' as const,
};
