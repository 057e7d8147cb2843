/** Where and as whom a source of the tests connects: a test database on the machine's PostgreSQL or MariaDB. */
export interface SourceSettings {
  host: string;
  port: number;
  database: string;
  user: string;
}

/**
 * `lake sources create`'s arguments for a database source, up to its password flags and output (given after it).
 * Without a name, the service names the source after its database.
 */
export function sourceCreateArgs(
  connector: 'postgres' | 'mysql',
  name: string | undefined,
  settings: SourceSettings,
): string[] {
  return [
    'sources',
    'create',
    '--connector',
    connector,
    ...(name === undefined ? [] : ['--name', name]),
    ...Object.entries(settings).flatMap(([key, value]) => ['--config', `${key}=${value}`]),
  ];
}
