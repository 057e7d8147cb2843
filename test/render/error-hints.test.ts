import { describe, expect, it } from 'vitest';
import { describeError } from '../../src/commands/errors.js';
import { LakeApiError } from '../../src/client/errors.js';

const apiError = (status: number, code: string, message: string): LakeApiError =>
  LakeApiError.fromResponse(new Response(null, { status }), {
    error: { type: 'invalid_request_error', code, message, request_id: 'req_1' },
  });

/** The API names jobs, not commands; the CLI's hint says which command deals with the job the message names. */
describe('CLI hints for API errors', () => {
  it('a sync in progress: follow or cancel the sync the message names', () => {
    const hint = describeError(
      apiError(
        409,
        'sync_in_progress',
        "Source src_1 already has sync sync_01abc queued or running; no second run was started. Follow that sync's job sync_01abc, or cancel it.",
      ),
    ).hint;
    expect(hint).toContain('lake jobs events sync_01abc');
    expect(hint).toContain('lake jobs cancel sync_01abc');
  });

  it('a send run in progress: cancel or wait for the run the message names', () => {
    expect(
      describeError(
        apiError(
          409,
          'send_in_progress',
          'Send snd_1 has run snr_02def in progress. Cancel its job snr_02def or let it finish, then delete.',
        ),
      ).hint,
    ).toContain('lake jobs cancel snr_02def');
  });

  it('paused sources and sends: the resume command', () => {
    expect(describeError(apiError(409, 'source_paused', 'Source src_1 is paused; resume it to sync.')).hint).toContain(
      'lake sources resume',
    );
    expect(describeError(apiError(409, 'send_paused', 'Send snd_1 is paused; resume it to run it.')).hint).toContain(
      'lake sends resume',
    );
  });
});
