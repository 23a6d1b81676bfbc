export { AnalyticsBrowser } from './npm';
export type { Analytics } from './analytics';
export type * from './types';
export type * from './ecommerce';
export type * from './semantic';
