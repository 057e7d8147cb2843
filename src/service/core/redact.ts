const BEARER_SECRET = /\b(pat|nsk|tak)_[0-9A-Za-z]{8,}/g;
const URL_CREDENTIALS = /([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+(:[^/\s@]*)?@/gi;
const PASSWORD_ASSIGNMENT = /\b(password|passwd|pwd|secret|token)\s*[=:]\s*("[^"]*"|'[^']*'|\S+)/gi;

/** Removes anything that looks like a secret from text bound for a log line or an error message. */
export function redactSecrets(text: string): string {
  return text
    .replace(BEARER_SECRET, '$1_[redacted]')
    .replace(URL_CREDENTIALS, '$1[redacted]@')
    .replace(PASSWORD_ASSIGNMENT, '$1=[redacted]');
}
