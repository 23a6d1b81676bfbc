// Wakes the extension's service worker with a message (no library on this page): `window.wake()` resolves with its
// answer.
window.wake = () => chrome.runtime.sendMessage({ wake: true });
