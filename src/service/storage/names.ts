import { LakeServiceError } from '../core/errors.js';

const MAX_NAME_LENGTH = 128;

/** Schema, table and view names: any text a user can see and type, so no control characters and no edge spaces. */
export function checkObjectName(name: string, param: string): string {
  if (
    name.length === 0 ||
    name.length > MAX_NAME_LENGTH ||
    /[\u0000-\u001f\u007f]/.test(name) ||
    name.trim() !== name
  ) {
    throw new LakeServiceError(
      'parameter_invalid',
      `${param} must be 1 to ${MAX_NAME_LENGTH} characters, without control characters or leading or trailing spaces.`,
      { param },
    );
  }
  return name;
}

/** `schema.name`, split at the first dot; names that contain dots are given as two separate arguments instead. */
export function splitQualifiedName(qualified: string, param: string): { schema: string; name: string } {
  const dot = qualified.indexOf('.');
  if (dot <= 0 || dot === qualified.length - 1) {
    throw new LakeServiceError(
      'parameter_invalid',
      `Write the name as <schema>.<name>, not '${qualified.slice(0, 80)}'.`,
      { param },
    );
  }
  return {
    schema: checkObjectName(qualified.slice(0, dot), param),
    name: checkObjectName(qualified.slice(dot + 1), param),
  };
}
