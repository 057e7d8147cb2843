/**
 * Characters a terminal acts on instead of showing: C0 controls (ESC starts the sequences that set the window
 * title, write the clipboard with OSC 52 or clear the screen; CR and BS overwrite what was shown), DEL, C1 controls
 * (0x9b is CSI on 8-bit terminals), and the Unicode direction overrides that make text read other than it is.
 * Newline and tab are left to the caller.
 */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const escape = (ch: string): string => {
  const code = ch.codePointAt(0) as number;
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
};

/**
 * Text from a caller (a source's table and column names, values, a server's error message) as a terminal may show
 * it: every control character written out as a visible escape (`\x1b`), so nothing a value holds can act on the
 * terminal. Only for what people read: pipes, files and --json keep the exact bytes.
 */
export function terminalSafe(text: string): string {
  return text.replace(CONTROLS, escape);
}
