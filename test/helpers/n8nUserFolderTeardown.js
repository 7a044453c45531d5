/** jest globalTeardown: removes the user folder n8nUserFolderSetup.js created. */
const { rmSync } = require('node:fs');

module.exports = () => {
	rmSync(process.env.N8N_USER_FOLDER, { recursive: true, force: true });
};
