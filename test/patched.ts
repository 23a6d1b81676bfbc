/** Runs `fn` with a built-in replaced the way a page might, and puts it back after (shared by the unit tests). */
export function patched<T extends object, K extends keyof T>(target: T, key: K, value: unknown, fn: () => void) {
  const saved = Object.getOwnPropertyDescriptor(target, key);
  (target as any)[key] = value;
  try {
    fn();
  } finally {
    if (saved) Object.defineProperty(target, key, saved);
    else delete target[key];
  }
}
