import { terminalSafe } from '../render/terminal-text.js';
import { CliError } from './exit-codes.js';
import { LakeApiError, LakeConnectionError, LakeRequestError } from '../client/errors.js';
import { LakeServiceError } from '../service/core/errors.js';
import { redactSecrets } from '../service/core/redact.js';
import { paletteFor } from '../render/colors.js';
import type { IOStreams } from '../render/iostreams.js';

export interface DescribedError {
  /** The API's error type; the CLI's own errors are `cli_error`. */
  type: string;
  code: string;
  message: string;
  param?: string | undefined;
  requestId?: string | undefined;
  docUrl?: string | undefined;
  hint?: string | undefined;
  about?: Record<string, string> | undefined;
}

const HINTS: Record<string, string> = {
  authentication_required: 'Pass --token, set LAKE_TOKEN, or run `lake auth login --base-url URL --token TOKEN`.',
  invalid_credentials: 'Check the token in --token, LAKE_TOKEN or your profile (`lake auth status`).',
  credentials_expired: 'Create a new token (`lake admin pat create` on the server) and log in with it.',
  credentials_revoked: 'Create a new token (`lake admin pat create` on the server) and log in with it.',
  missing_scope: 'Use a token that has the scope named above, or create one with it.',
  rate_limited: 'Wait a little and run the command again.',
  too_many_streams:
    'Stop another command that follows a job or a sync (`lake jobs events`, `lake sync start --follow`), then run this one again.',
  grant_introspection_denied: 'Browse the tables you may read with `lake catalog ls`.',
  service_key_permissions_off:
    'An owner turns table permissions on with `lake admin permissions on` and grants the key its tables.',
  source_paused: 'Resume the source with `lake sources resume <source>`, then sync.',
  send_paused: 'Resume the send with `lake sends resume <send>`, then run it.',
  source_pause_failed: 'Cancel the running sync (`lake jobs cancel <sync id>`) or wait for it, then pause.',
  connection_failed: 'Check --base-url or LAKE_BASE_URL, and that `lake serve` is running there.',
  internal_error: 'Retry later; quote the request id to the operator if it keeps happening.',
  // An id that names nothing the credential can see: where the ids it can see are listed.
  query_not_found: "List your queries with `lake query ls` (an owner or admin sees everyone's with --creator all).",
  job_not_found: 'List the jobs you can see with `lake jobs ls`.',
  source_not_found: 'List the sources with `lake sources ls`.',
  send_not_found: 'List the sends with `lake sends ls`.',
  canvas_not_found: 'List the canvases with `lake canvas ls`.',
  canvas_full: 'Make another canvas (`lake canvas create`) for more tables.',
  catalog_not_found: 'Browse the tables and views you may read with `lake catalog ls`.',
  pat_not_found: 'List your tokens with `lake pats ls`.',
  user_not_found: 'List the people of the organization with `lake admin user ls`.',
  grant_not_found: 'List the grants with `lake admin grants ls`.',
  organization_not_found: 'List the organizations with `lake admin org ls` (the service operator).',
};

/** Hints that name the job an error is about (the API names it in the message; the CLI says which command follows it). */
function jobHint(code: string, message: string): string | undefined {
  const job = /\b(sync|snr)_[0-9a-z]+/.exec(message)?.[0];
  if (!job) return undefined;
  if (code === 'sync_in_progress')
    return `Follow it with \`lake jobs events ${job}\`, or cancel it with \`lake jobs cancel ${job}\`.`;
  if (code === 'send_in_progress')
    return `Cancel it with \`lake jobs cancel ${job}\`, or wait for it (\`lake jobs wait ${job}\`).`;
  return undefined;
}

/** In local mode an unexpected error's message names the home's log: its reader is the operator. */
function localLogHint(code: string, message: string): string | undefined {
  if (code !== 'internal_error' || !/ is logged in .+ under request id /.test(message)) return undefined;
  return 'Find the request id in that log: it says what failed (a damaged file names the file to restore); report anything else as a bug in lake.';
}

export function describeError(error: unknown): DescribedError {
  if (error instanceof LakeApiError) {
    const retry =
      error.retryAfterSeconds === undefined ? undefined : `Retry after ${Math.ceil(error.retryAfterSeconds)} s.`;
    return {
      type: error.type,
      code: error.code,
      message: error.message,
      param: error.param,
      requestId: error.requestId,
      docUrl: error.docUrl,
      hint:
        retry ??
        jobHint(error.code, error.message) ??
        localLogHint(error.code, error.message) ??
        HINTS[error.code] ??
        (error.status >= 500 ? HINTS.internal_error : undefined),
    };
  }
  if (error instanceof LakeConnectionError)
    return { type: 'connection_error', code: error.code, message: error.message, hint: HINTS.connection_failed };
  if (error instanceof LakeRequestError)
    return {
      type: 'cli_error',
      code: error.code,
      message: error.message,
      hint:
        error.code === 'empty_parameter'
          ? 'Give the id or name the command asks for; each noun lists its own (lake jobs ls, lake catalog ls, …).'
          : 'Give it again as it was issued (a token from `lake pats create` or `lake auth login`, in --token, LAKE_TOKEN or the profile).',
    };
  if (error instanceof CliError)
    return {
      type: 'cli_error',
      code: error.code,
      message: error.message,
      hint: error.hint,
      about: error.about,
      requestId: error.requestId,
    };
  if (error instanceof LakeServiceError)
    return { type: 'api_error', code: error.code, message: error.message, param: error.param };
  // Anything else is a bug or an environment failure; its message may carry paths or secrets, so it is redacted.
  const message = error instanceof Error ? redactSecrets(error.message) : String(error);
  return {
    type: 'cli_error',
    code: 'unexpected_error',
    message,
    hint: 'This looks like a bug in lake; please report it with the command you ran.',
  };
}

/** Prints an error on stderr: code, message, request id, docs and what to do. With --json, the envelope as JSON. */
export function printError(io: IOStreams, error: unknown, json: boolean, exitCode?: number): void {
  const d = describeError(error);
  if (json) {
    // The API's envelope, with what the CLI adds: its exit code, and the ids the error is about (a failed query's).
    const envelope = {
      error: {
        type: d.type,
        code: d.code,
        message: d.message,
        param: d.param,
        request_id: d.requestId,
        doc_url: d.docUrl,
        hint: d.hint,
        ...d.about,
      },
      ...(exitCode === undefined ? {} : { exit_code: exitCode }),
    };
    io.stderr.write(`${JSON.stringify(envelope)}\n`);
    return;
  }
  const palette = paletteFor(io, 'stderr');
  // A message may quote what a caller or a source sent (a name, a value): it is shown, never acted on.
  const lines = [`${palette.red.bold('error')} ${palette.bold(terminalSafe(d.code))}: ${terminalSafe(d.message)}`];
  if (d.param) lines.push(`  param:      ${terminalSafe(d.param)}`);
  if (d.requestId) lines.push(`  request id: ${d.requestId}`);
  if (d.docUrl) lines.push(`  docs:       ${readableDocs(d.docUrl)}`);
  if (d.hint) lines.push(`  ${palette.yellow('hint:')}       ${terminalSafe(d.hint)}`);
  io.stderr.write(`${lines.join('\n')}\n`);
}

/** A local-mode error names a page of the in-process lake, which no browser can open: the CLI's own help instead. */
function readableDocs(docUrl: string): string {
  const local = /^http:\/\/local\.lake\/errors\/([a-z_]+)$/.exec(docUrl);
  return local ? `lake help errors ${local[1]}` : docUrl;
}
