export { AnalyticsBrowser, createAnalytics } from './analytics';
export type { Analytics } from './analytics';
export type * from './types';
export type * from './ecommerce';
export type * from './semantic';
