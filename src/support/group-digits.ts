/**
 * 1234567 → "1,234,567", as `toLocaleString('en-US')` writes a whole number, without it: the first use of Node's
 * number formatting loads its locale data, ~9 ms that every `lake sync start` and `lake query` paid to print a count.
 * Anything but a safe integer goes to `toLocaleString` as before.
 */
export function groupDigits(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-US');
  const digits = String(Math.abs(n));
  let grouped = digits.slice(0, digits.length % 3 || 3);
  for (let at = grouped.length; at < digits.length; at += 3) grouped += `,${digits.slice(at, at + 3)}`;
  return n < 0 ? `-${grouped}` : grouped;
}
