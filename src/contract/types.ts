/** The wire objects as TypeScript types, for the client, the CLI and the routes that build them. */
import type { Canvas, CanvasDeletion, CanvasElement, TableData } from './canvases.js';
import type { DuckLakeAttach, SchemaSummary, Table, TableSummary, TableVersion } from './catalog.js';
import type { PersonalAccessToken, ServiceKey, TeamApiKey, WhoAmI } from './credentials.js';
import type { Job, JobCancellation, JobResult, StreamUrl } from './jobs.js';
import type { Query, QueryParameterValue, ResultFile } from './queries.js';
import type { Static } from './schema.js';
import type { Send, SendRun } from './sends.js';
import type { ErrorCodeInfo, Health, Readiness, Usage, Version } from './service.js';
import type { Connector, LogEntry, Source, SourceDeletion, SourceTest, Sync, SyncTable } from './sources.js';

export type QueryObject = Static<typeof Query>;
export type QueryStatusName = QueryObject['status'];
export type QueryParameterObject = Static<typeof QueryParameterValue>;
export type ResultFileObject = Static<typeof ResultFile>;
export type JobObject = Static<typeof Job>;
export type JobResultObject = Static<typeof JobResult>;
export type SourceObject = Static<typeof Source>;
export type ConnectorObject = Static<typeof Connector>;
export type SyncObject = Static<typeof Sync>;
export type SyncTableObject = Static<typeof SyncTable>;
export type LogEntryObject = Static<typeof LogEntry>;
export type SendObject = Static<typeof Send>;
export type SendRunObject = Static<typeof SendRun>;
export type CanvasObject = Static<typeof Canvas>;
export type CanvasElementObject = Static<typeof CanvasElement>;
export type CanvasDeletionObject = Static<typeof CanvasDeletion>;
export type SchemaObject = Static<typeof SchemaSummary>;
export type TableSummaryObject = Static<typeof TableSummary>;
export type TableObject = Static<typeof Table>;
export type DuckLakeAttachObject = Static<typeof DuckLakeAttach>;
export type TableVersionObject = Static<typeof TableVersion>;
export type WhoAmIObject = Static<typeof WhoAmI>;
export type PatObject = Static<typeof PersonalAccessToken>;
export type ServiceKeyObject = Static<typeof ServiceKey>;
export type TeamApiKeyObject = Static<typeof TeamApiKey>;
export type UsageObject = Static<typeof Usage>;

import type { SendCreation, SendDeletion } from './sends.js';
import type { SourceChange, SourceCreation } from './sources.js';

/** Request bodies a client assembles from several inputs (flags, files) before sending. */
export type SendCreationBody = Static<typeof SendCreation>;
export type SourceCreationBody = Static<typeof SourceCreation>;
export type SourceChangeBody = Static<typeof SourceChange>;

/** The smaller answers, built in their routes. */
export type JobCancellationObject = Static<typeof JobCancellation>;
export type StreamUrlObject = Static<typeof StreamUrl>;
export type SourceDeletionObject = Static<typeof SourceDeletion>;
export type SourceTestObject = Static<typeof SourceTest>;
export type SendDeletionObject = Static<typeof SendDeletion>;
export type VersionObject = Static<typeof Version>;
export type HealthObject = Static<typeof Health>;
export type ReadinessObject = Static<typeof Readiness>;
export type ErrorCodeObject = Static<typeof ErrorCodeInfo>;
export type TableDataObject = Static<typeof TableData>;
