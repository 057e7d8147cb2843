import { EventEmitter } from 'node:events';

/** The listeners of one process, by channel. */
export class Notices {
  private readonly emitter = new EventEmitter();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  listen(channel: string, handler: (payload: string) => void): () => void {
    this.emitter.on(channel, handler);
    return () => this.emitter.off(channel, handler);
  }

  deliver(channel: string, payload: string): void {
    this.emitter.emit(channel, payload);
  }

  channels(): string[] {
    return this.emitter.eventNames().map(String);
  }
}
