/**
 * jest globalSetup: n8n-core reads its instance settings from a user folder on first use. One
 * throwaway folder for the whole run keeps tests off $HOME; n8nUserFolderTeardown.js removes it, and
 * scripts/tempDirs.js removes it if the run is interrupted (or the next run does, if it was killed).
 */
const { makeTempDir } = require('../../scripts/tempDirs');

module.exports = () => {
	process.env.N8N_USER_FOLDER = makeTempDir('n8n');
};
