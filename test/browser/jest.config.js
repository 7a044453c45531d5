/**
 * The browser tests (`npm run test:browser`): n8n's editor in headless Chromium (Debian's
 * /usr/bin/chromium), each file against its own n8n and sandbox, steps in order within a file.
 */
const { n8nProject, n8nRun } = require('../helpers/n8nJest');

module.exports = n8nRun([n8nProject('browser')]);
