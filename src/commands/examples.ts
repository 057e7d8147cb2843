import type { Command } from 'commander';

/**
 * One to three examples for every command, shown at the end of its --help: what people copy first. Keyed by the
 * command's path; a test checks that every command has some.
 */
export const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  '': [
    'lake query "select 42"',
    'lake sources create --connector postgres --name shop --config host=db.internal --config user=reader',
    'lake help environment',
  ],
  whoami: ['lake whoami', 'lake whoami --json'],
  sql: ['lake sql', 'lake --base-url https://lake.example.com sql --output vertical', 'lake sql < report.sql'],
  init: ['lake init', 'lake --home ./lake init --token-name laptop'],
  query: [
    'lake query "select count(*) from shop.orders"',
    'lake query -f report.sql --output csv > report.csv',
    'lake query download qr_01h… -o result.parquet',
  ],
  'query run': [
    'lake query run "select * from shop.orders limit 10"',
    'echo "select 1" | lake query run -',
    'lake query run --wait 5 "select …"   # print the query id if it is not done in 5 s',
  ],
  'query poll': ['lake query poll qr_01h…', 'lake query poll qr_01h… --json'],
  'query download': ['lake query download qr_01h… -o orders.parquet', 'lake query download qr_01h… --format csv -o -'],
  'query ls': ['lake query ls --status failed --since 1d', 'lake query ls --search orders --tag team:finance --json'],
  'query result': ['lake query result qr_01h…', 'lake query result qr_01h… --output json > rows.json'],
  catalog: ['lake catalog ls', 'lake catalog ls shop', 'lake catalog describe shop.orders'],
  'catalog ls': ['lake catalog ls', 'lake catalog ls shop --output csv'],
  'catalog describe': ['lake catalog describe shop.orders', 'lake catalog describe "my schema" "my.table"'],
  'catalog history': [
    'lake catalog history shop.orders',
    'lake query "select count(*) from shop.orders AT (VERSION => 42)"',
  ],
  jobs: ['lake jobs ls', 'lake jobs events sync_01h…', 'lake jobs cancel qr_01h…'],
  'jobs ls': ['lake jobs ls --limit 50', 'lake jobs ls --all --output csv'],
  'jobs get': ['lake jobs get sync_01h…'],
  'jobs wait': ['lake jobs wait sync_01h…', 'lake jobs wait qr_01h… --timeout 60'],
  'jobs events': ['lake jobs events sync_01h…', 'lake jobs events sync_01h… --json | jq .event'],
  'jobs cancel': ['lake jobs cancel qr_01h…'],
  'jobs result': ['lake jobs result qr_01h… -o result.parquet'],
  sources: [
    'lake sources ls',
    'lake sources create --connector postgres --name shop --config host=db --config user=reader',
    'lake sources update shop --incremental public.orders:updated_at',
  ],
  'sources ls': ['lake sources ls', 'lake sources ls --json'],
  'sources get': ['lake sources get shop'],
  'sources create': [
    'lake sources create --connector postgres --name shop --config host=db.internal --config user=reader --config database=shop',
    'lake sources create --connector mysql --name orders --config host=mysql.internal --config user=reader --config database=orders',
    'lake sources create --from-file source.json --password-stdin < password.txt',
  ],
  'sources update': [
    'lake sources update shop --disable public.audit_log',
    'lake sources update shop --incremental public.orders:updated_at',
    'lake sources update shop --config port=6432',
  ],
  'sources pause': ['lake sources pause shop'],
  'sources resume': ['lake sources resume shop'],
  'sources test': ['lake sources test shop'],
  'sources delete': ['lake sources delete shop'],
  connectors: ['lake connectors ls', 'lake connectors get postgres'],
  'connectors ls': ['lake connectors ls', 'lake connectors ls --json'],
  'connectors get': ['lake connectors get postgres', 'lake connectors get postgres --json'],
  sync: ['lake sync start shop', 'lake sync status shop'],
  'sync start': [
    'lake sync start shop',
    'lake sync start shop --tables public.orders --full-refresh',
    'lake sync start shop --detach   # print the sync id and return',
  ],
  'sync status': ['lake sync status shop'],
  pats: ['lake pats create --name laptop --scopes query:read,data:read', 'lake pats ls', 'lake pats revoke tok_01h…'],
  'pats create': ['lake pats create --name laptop --scopes query:read,data:read --expires-in-days 90'],
  'pats ls': ['lake pats ls'],
  'pats revoke': ['lake pats revoke tok_01h…'],
  canvas: [
    'lake canvas create --name Sales',
    'lake canvas add Sales --name "Top orders" --sql "select * from shop.orders order by total desc limit 10"',
  ],
  'canvas create': ['lake canvas create --name Sales'],
  'canvas add': [
    'lake canvas add Sales --name Orders --table shop.orders',
    'lake canvas add Sales --name "Big orders" --sql "select * from shop.orders where total > 1000"',
  ],
  'canvas ls': ['lake canvas ls'],
  'canvas get': ['lake canvas get Sales'],
  'canvas delete': ['lake canvas delete Sales'],
  logs: ['lake logs --source shop --since 2h', 'lake logs --kind schema_change --follow'],
  sends: [
    'lake sends create --name nightly --sql "select * from shop.orders" --to webhook --url https://hooks.example.com/lake --every 1440',
    'lake sends run nightly',
    'lake sends runs nightly',
  ],
  'sends ls': ['lake sends ls'],
  'sends get': ['lake sends get nightly'],
  'sends create': [
    'lake sends create --name nightly --sql "select * from shop.orders" --to webhook --url https://hooks.example.com/lake --every 1440',
    'lake sends create --name copy --sql-file orders.sql --to postgres --host db --database dw --user loader --table orders --key order_id --password-stdin < pw.txt',
  ],
  'sends pause': ['lake sends pause nightly'],
  'sends resume': ['lake sends resume nightly'],
  'sends run': ['lake sends run nightly'],
  'sends runs': ['lake sends runs nightly --limit 5'],
  'sends delete': ['lake sends delete nightly'],
  usage: ['lake usage', 'lake usage --month 2026-10 --json'],
  serve: [
    'lake serve --port 8080',
    'LAKE_CORS_ORIGINS=https://app.example.com lake serve --host 0.0.0.0 --public-url https://lake.example.com',
  ],
  admin: [
    'lake admin user create --name Ada --email ada@example.com --role member',
    'lake admin permissions on',
    'lake admin grant shop.orders --to user:Ada',
  ],
  'admin pat': ['lake admin pat create --user Ada --scopes query:read'],
  'admin pat create': ['lake admin pat create --user Ada --scopes query:read,data:read --name "Ada laptop"'],
  'admin service-key': ['lake admin service-key create --name etl --scopes query:read'],
  'admin service-key create': ['lake admin service-key create --name etl --scopes query:read --expires-in-days 30'],
  'admin team-key': ['lake admin team-key create --name legacy-dashboard'],
  'admin team-key create': ['lake admin team-key create --name legacy-dashboard'],
  'admin audit': [
    'lake admin audit --since 7d',
    'lake admin audit --action source.credentials_changed --json',
    'LAKE_TOKEN=opr_… lake --base-url https://lake.example.com admin audit --action authentication.failed_burst',
  ],
  'admin permissions': ['lake admin permissions on', 'lake admin permissions off'],
  'admin grant': ['lake admin grant shop.orders --to user:Ada', 'lake admin grant shop.orders --to key_01h…'],
  'admin revoke': ['lake admin revoke shop.orders --to user:Ada'],
  'admin grants': ['lake admin grants ls'],
  'admin grants ls': ['lake admin grants ls'],
  'admin user': ['lake admin user ls', 'lake admin user create --name Ada --email ada@example.com --role member'],
  'admin user ls': ['lake admin user ls'],
  'admin user create': ['lake admin user create --name Ada --email ada@example.com --role member'],
  'admin user role': ['lake admin user role usr_01h… admin'],
  'admin user deactivate': ['lake admin user deactivate usr_01h…'],
  'admin user reactivate': ['lake admin user reactivate usr_01h…'],
  'admin org': [
    'lake admin org create "Second team" --owner-name Ann --owner-email ann@example.com',
    'LAKE_TOKEN=opr_… lake --base-url https://lake.example.com admin org ls',
  ],
  'admin org create': [
    'lake admin org create "Second team" --owner-name Ann --owner-email ann@example.com',
    'LAKE_TOKEN=opr_… lake --base-url https://lake.example.com admin org create "Second team" --owner-name Ann --json',
  ],
  'admin org ls': [
    'lake admin org ls',
    'LAKE_TOKEN=opr_… lake --base-url https://lake.example.com admin org ls --json',
  ],
  'admin org rename': ['lake admin org rename org_01h… "Team two"'],
  'admin org deactivate': ['lake admin org deactivate org_01h…'],
  'admin org reactivate': ['lake admin org reactivate org_01h…'],
  'admin org add-owner': ['lake admin org add-owner org_01h… --name Ann --email ann@example.com'],
  'admin operator-token': ['lake admin operator-token ls', 'lake admin operator-token revoke opt_01h…'],
  'admin operator-token create': ['lake admin operator-token create --name "second operator" --json'],
  'admin operator-token ls': ['lake admin operator-token ls'],
  'admin operator-token revoke': ['lake admin operator-token revoke opt_01h…'],
  'admin view': [
    'lake admin view create shop.big_orders --sql "select * from shop.orders where total > 1000"',
    'lake admin view drop shop.big_orders',
  ],
  'admin view create': ['lake admin view create shop.big_orders --sql "select * from shop.orders where total > 1000"'],
  'admin view drop': ['lake admin view drop shop.big_orders'],
  'admin gc': ['lake admin gc'],
  'admin ducklake': ['lake admin ducklake', 'lake admin ducklake | duckdb', 'lake admin ducklake --json'],
  config: ['lake config set base_url https://lake.example.com', 'lake config use work', 'lake config ls'],
  'config set': ['lake config set base_url https://lake.example.com', 'lake --profile work config set token pat_…'],
  'config unset': ['lake config unset token'],
  'config get': ['lake config get base_url'],
  'config ls': ['lake config ls'],
  'config use': ['lake config use work'],
  auth: ['lake auth login --base-url https://lake.example.com --with-token < token.txt', 'lake auth status'],
  'auth login': [
    'lake auth login --base-url https://lake.example.com --with-token < token.txt',
    'lake --profile work auth login --base-url https://lake.example.com --token pat_…',
  ],
  'auth logout': ['lake auth logout'],
  'auth status': ['lake auth status'],
  help: ['lake help sync start', 'lake help environment'],
  version: ['lake version'],
  completion: [
    'source <(lake completion bash)',
    'lake completion zsh > "${fpath[1]}/_lake"',
    'lake completion fish > ~/.config/fish/completions/lake.fish',
  ],
  __complete: ['lake __complete -- sources cr'],
};

/** The path of a command below the program (`sources create`). */
export function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Adds each command's examples to the end of its help. */
export function addExamples(program: Command): void {
  const visit = (command: Command): void => {
    const examples = EXAMPLES[commandPath(command)];
    if (examples) command.addHelpText('after', `\nExamples:\n${examples.map((e) => `  $ ${e}`).join('\n')}\n`);
    command.commands.forEach(visit);
  };
  visit(program);
}
