/** Writes the output schemas (schemas.ts) as JSON Schema next to the built nodes: run by `npm run build`. */
import * as fs from 'node:fs';
import * as path from 'node:path';

import { OUTPUT_SCHEMAS, SCHEMA_VERSION_DIR, toJsonSchema } from './schemas';

export function schemaFiles(): Array<{ file: string; json: string }> {
	return Object.entries(OUTPUT_SCHEMAS).flatMap(([nodeDir, schemas]) =>
		Object.entries(schemas).map(([name, schema]) => ({
			file: path.join('nodes', nodeDir, '__schema__', SCHEMA_VERSION_DIR, `${name}.json`),
			json: `${JSON.stringify(toJsonSchema(schema), null, '\t')}\n`,
		})),
	);
}

if (require.main === module) {
	const outDir = process.argv[2] ?? 'dist';
	for (const { file, json } of schemaFiles()) {
		const target = path.join(outDir, file);
		fs.mkdirSync(path.dirname(target), { recursive: true });
		fs.writeFileSync(target, json);
	}
	console.log(`wrote ${schemaFiles().length} output schemas into ${outDir}/nodes/*/__schema__/${SCHEMA_VERSION_DIR}/`);
}
