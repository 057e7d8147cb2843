/** The API's routes: Tokens, service keys and team keys. */
import {
  PersonalAccessToken,
  ServiceKey,
  ServiceKeyCreation,
  TeamApiKey,
  TeamKeyCreation,
  TokenCreation,
} from './credentials.js';
import { defineRoute } from './route.js';
import { List } from './schema.js';
import { id, page, cursorErrors, json } from './route-helpers.js';

const keyRoutes = (
  path: string,
  name: string,
  object: typeof ServiceKey | typeof TeamApiKey,
  body: typeof ServiceKeyCreation | typeof TeamKeyCreation,
  what: string,
) => ({
  create: defineRoute({
    operationId: `create${name}`,
    method: 'post',
    path,
    tag: 'Keys',
    summary: `Create a ${what} (the secret is shown once)`,
    auth: { scopes: ['keys:manage'] },
    body,
    responses: { 201: json(`The ${what} with its secret.`, object, ['Location']) },
    errors: ['owner_required', 'missing_scope', 'object_limit_reached'],
  }),
  list: defineRoute({
    operationId: `list${name}s`,
    method: 'get',
    path,
    tag: 'Keys',
    summary: `List ${what}s`,
    auth: { scopes: ['keys:manage'] },
    query: page(),
    paramErrors: cursorErrors,
    responses: { 200: json(`A page of ${what}s.`, List(object)) },
    errors: ['owner_required', 'invalid_cursor'],
  }),
  revoke: defineRoute({
    operationId: `revoke${name}`,
    method: 'post',
    path: `${path}/{id}/revoke`,
    tag: 'Keys',
    summary: `Revoke a ${what}`,
    auth: { scopes: ['keys:manage'] },
    params: id(`A ${what} id.`),
    responses: { 200: json(`The revoked ${what}.`, object) },
    errors: ['owner_required', 'key_not_found'],
  }),
});

export const CREDENTIAL_ROUTES = {
  createPersonalAccessToken: defineRoute({
    operationId: 'createPersonalAccessToken',
    method: 'post',
    path: '/pats',
    tag: 'Keys',
    summary: 'Create a personal access token (the secret is shown once)',
    auth: { scopes: ['pats:manage'] },
    body: TokenCreation,
    responses: { 201: json('The token with its secret.', PersonalAccessToken, ['Location']) },
    errors: ['user_required', 'missing_scope', 'object_limit_reached'],
  }),
  listPersonalAccessTokens: defineRoute({
    operationId: 'listPersonalAccessTokens',
    method: 'get',
    path: '/pats',
    tag: 'Keys',
    summary: 'List your personal access tokens',
    auth: { scopes: ['pats:manage'] },
    query: page(),
    paramErrors: cursorErrors,
    responses: { 200: json('A page of tokens.', List(PersonalAccessToken)) },
    errors: ['user_required', 'invalid_cursor'],
  }),
  revokePersonalAccessToken: defineRoute({
    operationId: 'revokePersonalAccessToken',
    method: 'post',
    path: '/pats/{id}/revoke',
    tag: 'Keys',
    summary: 'Revoke a personal access token',
    auth: { scopes: ['pats:manage'] },
    params: id('A token id.'),
    responses: { 200: json('The revoked token.', PersonalAccessToken) },
    errors: ['user_required', 'pat_not_found'],
  }),
  serviceKeys: keyRoutes('/service-keys', 'ServiceKey', ServiceKey, ServiceKeyCreation, 'service key'),
  teamKeys: keyRoutes('/team-keys', 'TeamApiKey', TeamApiKey, TeamKeyCreation, 'team API key'),
};
