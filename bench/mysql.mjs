// What the MySQL benches share: the arguments of a `lake sources create` for a MySQL source.

/** `lake sources create` arguments for a MySQL source named `name`, printing JSON (no password: the benches use root). */
export function createMysqlSourceArgs(name, { host, port, database, user = 'root' }) {
  return [
    'sources',
    'create',
    '--connector',
    'mysql',
    '--name',
    name,
    '--config',
    `host=${host}`,
    '--config',
    `port=${port}`,
    '--config',
    `database=${database}`,
    '--config',
    `user=${user}`,
    '--no-password',
    '--json',
  ];
}
