import type { CredentialStore } from './auth/credentials.js';
import type { Directory } from './auth/directory.js';
import type { Home } from './home/home.js';

/** The domain services one API app serves; built once per home. */
export interface LakeServices {
  home: Home;
  directory: Directory;
  credentials: CredentialStore;
}

export function createServices(home: Home): LakeServices {
  return { home, directory: home.directory, credentials: home.credentials };
}
