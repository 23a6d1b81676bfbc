// Types of driver.mjs: one small interface over Playwright (Chromium), puppeteer-core (Firefox, WebDriver BiDi)
// and webdriverio (WebKitGTK, classic WebDriver).

export type EngineName = 'chromium' | 'firefox' | 'webkit';

/** A top-level page, as a user has it in a tab. */
export interface Tab {
  /** Navigates and resolves once the new page's `load` event fired. */
  goto(url: string): Promise<void>;
  /** Reloads and resolves once the page's `load` event fired. */
  reload(): Promise<void>;
  /**
   * Runs `fn(arg)` in the page (an async `fn` is awaited) and resolves with its JSON-serialisable result.
   * `fn` is sent as source text: it cannot use variables of the test's scope, only `arg`.
   */
  evaluate<T, A = undefined>(fn: (arg: A) => T | Promise<T>, arg?: A): Promise<T>;
  /** Closes the tab as a user does (no beforeunload prompt; the page sees visibilitychange and pagehide). */
  close(): Promise<void>;
}

/** A fresh browser profile: its own cookies, localStorage and IndexedDB, shared by its tabs. */
export interface Context {
  newTab(): Promise<Tab>;
  close(): Promise<void>;
}

export interface Engine {
  name: EngineName;
  /** The browser's version, as its driver reports it. */
  readonly version: string;
  newContext(): Promise<Context>;
  /** Closes the browser and stops every process started for it. */
  close(): Promise<void>;
}

export declare const ENGINES: EngineName[];

/** Why `name` cannot run on this machine (a browser or driver is not installed), or null. */
export declare function missing(name: EngineName): string | null;

/** Launches `name`; rejects when it cannot (see `missing`) or does not start within a bound. */
export declare function launch(name: EngineName): Promise<Engine>;

/** A TCP port on 127.0.0.1 that was free when asked. */
export declare function freePort(): Promise<number>;
