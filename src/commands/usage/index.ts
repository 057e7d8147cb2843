import type { Command } from 'commander';
import { printFields, printJson } from '../../render/record.js';
import type { CommandContext } from '../context.js';
import { groupDigits } from '../../support/group-digits.js';

const usd = (n: number): string => `$${n.toFixed(n < 1 ? 4 : 2)}`;
const count = groupDigits;
const bytes = (n: number): string =>
  n >= 1024 ** 3
    ? `${(n / 1024 ** 3).toFixed(2)} GB`
    : n >= 1024 ** 2
      ? `${(n / 1024 ** 2).toFixed(1)} MB`
      : `${count(n)} B`;

/** One bar per day, scaled to the month's busiest day, in whole and eighth blocks. */
export function dayBars(days: readonly { date: string; cost: number }[], width = 30): string[] {
  const top = Math.max(...days.map((d) => d.cost), 0);
  const eighths = ['', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
  return days.map((d) => {
    const cells = top === 0 ? 0 : (d.cost / top) * width;
    const bar = '█'.repeat(Math.floor(cells)) + (eighths[Math.round((cells % 1) * 7)] ?? '');
    return `${d.date.slice(5)} ${bar.padEnd(width)} ${usd(d.cost)}`;
  });
}

export function registerUsage(program: Command, ctx: CommandContext): void {
  program
    .command('usage')
    .description('metered usage of a month, with its projected cost and a chart per day')
    .option('--month <yyyy-mm>', 'which month (default: this one)')
    .action(async (o: { month?: string }) => {
      const [{ SERVICE_ROUTES }, { checkedQuery }] = await Promise.all([
        import('../../contract/routes.js'),
        import('../flag-values.js'),
      ]);
      const query = checkedQuery(SERVICE_ROUTES.getUsage, { month: o.month });
      const body = await (await ctx.client()).read(SERVICE_ROUTES.getUsage, { query });
      if (ctx.json) return printJson(ctx.io, body);
      if (!ctx.io.isStdoutTTY) {
        // In a pipe: one `name<TAB>value` line per figure, raw numbers, no chart (--json has the days).
        return printFields(ctx.io, [
          ['month', body.month],
          ...Object.entries(body.totals),
          ['storage_bytes', body.storage_bytes],
          ['cost_month_to_date', body.cost.month_to_date],
          ['cost_projected', body.cost.projected],
          ['days_elapsed', body.cost.days_elapsed],
          ['days_in_month', body.cost.days_in_month],
          ...body.by_tag.flatMap((t): [string, number][] => [
            [`tag.${t.tag}.queries_run`, t.queries_run],
            [`tag.${t.tag}.result_bytes`, t.result_bytes],
            [`tag.${t.tag}.cost`, t.cost],
          ]),
        ]);
      }
      const out = ctx.io.stdout;
      out.write(`usage ${body.month}\n`);
      out.write(`  queries run     ${count(body.totals.queries_run ?? 0)}\n`);
      out.write(`  result data     ${bytes(body.totals.result_bytes ?? 0)}\n`);
      out.write(`  rows synced     ${count(body.totals.rows_synced ?? 0)}\n`);
      out.write(`  rows sent       ${count(body.totals.rows_sent ?? 0)}\n`);
      out.write(`  lake storage    ${bytes(body.storage_bytes)}\n`);
      out.write(`  cost so far     ${usd(body.cost.month_to_date)}\n`);
      out.write(
        `  projected       ${usd(body.cost.projected)} (day ${body.cost.days_elapsed} of ${body.cost.days_in_month})\n`,
      );
      if (body.days.length > 0) out.write(`\n${dayBars(body.days).join('\n')}\n`);
      if (body.by_tag.length > 0) {
        const width = Math.max(...body.by_tag.map((t) => t.tag.length));
        out.write('\nby query tag\n');
        for (const t of body.by_tag)
          out.write(
            `  ${t.tag.padEnd(width)}  ${count(t.queries_run).padStart(8)} queries  ${bytes(t.result_bytes).padStart(10)}  ${usd(t.cost)}\n`,
          );
      }
    });
}
