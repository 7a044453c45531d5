/**
 * jest globalSetup: n8n-core reads its instance settings from a user folder on first use. One
 * throwaway folder for the whole run keeps tests off $HOME; n8nUserFolderTeardown.js removes it.
 */
const { mkdtempSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

module.exports = () => {
	process.env.N8N_USER_FOLDER = mkdtempSync(join(tmpdir(), 'agency-inbox-n8n-'));
};
