import type { Page } from '@playwright/test';

export interface Frame {
  file: string;
  line: number;
  fn: string;
  segment: string;
}
export interface CallPath {
  calls: number;
  files: number;
  chain: Frame[];
  ran: (Omit<Frame, 'segment'> & { count: number })[];
  gate: Record<string, number>;
  middleware: number;
}
export declare function buildPlain(): Promise<string>;
export declare function measure(page: Page, bundleFile: string): Promise<CallPath>;
export declare function format(result: CallPath, label: string): string;
