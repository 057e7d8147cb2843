import type { CredentialStore } from './auth/credentials.js';
import type { Directory } from './auth/directory.js';
import type { Home } from './home/home.js';
import { PersonalTokens } from './auth/personal-tokens.js';

/** The domain services one API app serves; built once per home. */
export interface LakeServices {
  home: Home;
  directory: Directory;
  credentials: CredentialStore;
  personalTokens: PersonalTokens;
}

export function createServices(home: Home): LakeServices {
  return {
    home,
    directory: home.directory,
    credentials: home.credentials,
    personalTokens: new PersonalTokens(home.db, home.credentials),
  };
}
