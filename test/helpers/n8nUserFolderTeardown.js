/** jest globalTeardown: removes the user folder n8nUserFolderSetup.js created. */
const { removeTempDir } = require('../../scripts/tempDirs');

module.exports = () => {
	removeTempDir(process.env.N8N_USER_FOLDER);
};
