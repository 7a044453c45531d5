/**
 * The browser smoke test (`npm run test:browser`): n8n's editor in headless Chromium (Debian's
 * /usr/bin/chromium), against its own n8n and sandbox. One browser, steps in order, so in band.
 */
const base = require('../e2e/jest.config');

module.exports = { ...base, roots: ['<rootDir>/test/browser'], testTimeout: 90_000 };
