/**
 * A stand-in for the npm registry, for installing our package from n8n's Community Nodes screen.
 *
 * n8n runs npm with `--registry=https://registry.npmjs.org` whatever npm's settings say (another
 * registry, N8N_COMMUNITY_PACKAGES_REGISTRY, needs an enterprise licence), so the stand-in is reached
 * the way a company network reaches the registry: through an HTTPS proxy (HTTPS_PROXY) whose
 * certificate authority npm and Node are told to trust (npm's `cafile`, NODE_EXTRA_CA_CERTS). The
 * proxy answers CONNECTs to registry.npmjs.org itself, with a certificate of that name signed by a
 * throwaway authority (made with `openssl`), and refuses every other host. It serves packuments and
 * tarballs of the packages it is given, nothing else, and records what was asked.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';

const REGISTRY_HOST = 'registry.npmjs.org';
const REGISTRY_ORIGIN = `https://${REGISTRY_HOST}`;

export interface PublishedVersion {
	/** The package.json inside the tarball. */
	manifest: { name: string; version: string; [field: string]: unknown };
	tarball: Buffer;
}

export interface NpmRegistry {
	/** `http://127.0.0.1:<port>`: HTTPS_PROXY for npm and n8n. */
	proxyUrl: string;
	/** The certificate authority of the proxy's certificate (PEM file). */
	caFile: string;
	/** Adds a version and makes it `latest`, as `npm publish` does. */
	publish(version: PublishedVersion): void;
	/** Every request the registry answered: `GET /<name>`, `GET /<name>/-/<file>.tgz`, ... */
	requests: string[];
	/** CONNECTs to other hosts, refused. */
	refused: string[];
	/** The variables that send npm (and n8n's own requests to the registry) here. */
	env(): Record<string, string>;
	close(): Promise<void>;
}

const run = promisify(execFile);

/** A certificate authority and a certificate for registry.npmjs.org signed by it, in `dir`. */
async function makeCertificates(dir: string): Promise<{ caFile: string; key: Buffer; cert: Buffer }> {
	await run('openssl', ['version']).catch(() => {
		throw new Error('openssl is missing (it makes the stand-in registry\'s certificates): apt-get install -y --no-install-recommends openssl');
	});
	const file = (name: string) => path.join(dir, name);
	const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
	await run('openssl', ['req', '-x509', ...ecKey, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', '2', '-subj', '/CN=agency-inbox test registry CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign']);
	await run('openssl', ['req', ...ecKey, '-keyout', file('registry.key'), '-out', file('registry.csr'), '-subj', `/CN=${REGISTRY_HOST}`]);
	await fs.writeFile(file('registry.ext'), `subjectAltName=DNS:${REGISTRY_HOST}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
	await run('openssl', ['x509', '-req', '-in', file('registry.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('registry.pem'), '-days', '2', '-extfile', file('registry.ext')]);
	return { caFile: file('ca.pem'), key: await fs.readFile(file('registry.key')), cert: await fs.readFile(file('registry.pem')) };
}

/** The registry's JSON for one version: the manifest and where and how to check its tarball. */
function versionDocument({ manifest, tarball }: PublishedVersion): Record<string, unknown> {
	const { name, version } = manifest;
	return {
		...manifest,
		_id: `${name}@${version}`,
		dist: {
			tarball: `${REGISTRY_ORIGIN}/${name}/-/${name}-${version}.tgz`,
			integrity: `sha512-${createHash('sha512').update(tarball).digest('base64')}`,
			shasum: createHash('sha1').update(tarball).digest('hex'),
		},
	};
}

/** Starts the proxy and registry on 127.0.0.1; `workDir` receives the certificates. */
export async function startNpmRegistry(workDir: string): Promise<NpmRegistry> {
	await fs.mkdir(workDir, { recursive: true });
	const { caFile, key, cert } = await makeCertificates(workDir);
	const packages = new Map<string, { versions: Map<string, PublishedVersion>; latest: string; times: Record<string, string> }>();
	const requests: string[] = [];
	const refused: string[] = [];

	const answer = (response: http.ServerResponse, status: number, body: unknown) => {
		const content = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
		response.writeHead(status, { 'content-type': Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json', 'content-length': content.length });
		response.end(content);
	};
	const registry = http.createServer((request, response) => {
		const route = decodeURIComponent(new URL(request.url ?? '/', REGISTRY_ORIGIN).pathname);
		requests.push(`${request.method} ${route}`);
		const [, name, third, file] = /^\/([^/]+)(?:\/([^/]+))?(?:\/(.+))?$/.exec(route) ?? [];
		const entry = name ? packages.get(name) : undefined;
		if (request.method !== 'GET' || !entry) return answer(response, 404, { error: 'Not found' });
		if (third === undefined) {
			return answer(response, 200, {
				name,
				'dist-tags': { latest: entry.latest },
				versions: Object.fromEntries([...entry.versions.values()].map((published) => [published.manifest.version, versionDocument(published)])),
				time: entry.times,
			});
		}
		if (third === '-' && file) {
			const published = [...entry.versions.values()].find((candidate) => file === `${name}-${candidate.manifest.version}.tgz`);
			return published ? answer(response, 200, published.tarball) : answer(response, 404, { error: 'Not found' });
		}
		const published = entry.versions.get(third === 'latest' ? entry.latest : third);
		return published && file === undefined ? answer(response, 200, versionDocument(published)) : answer(response, 404, { error: 'Not found' });
	});

	const proxy = http.createServer((request, response) => {
		refused.push(`${request.method} ${request.url}`);
		response.writeHead(403).end('only CONNECT to registry.npmjs.org');
	});
	proxy.on('connect', (request: http.IncomingMessage, client: Socket, head: Buffer) => {
		if (request.url !== `${REGISTRY_HOST}:443`) {
			refused.push(`CONNECT ${request.url}`);
			client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
			return;
		}
		client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
		if (head.length > 0) client.unshift(head);
		const secure = new tls.TLSSocket(client, { isServer: true, key, cert });
		secure.on('error', () => client.destroy());
		registry.emit('connection', secure);
	});
	await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
	const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;

	return {
		proxyUrl,
		caFile,
		requests,
		refused,
		publish(published) {
			const { name, version } = published.manifest;
			const entry = packages.get(name) ?? { versions: new Map<string, PublishedVersion>(), latest: version, times: {} as Record<string, string> };
			entry.versions.set(version, published);
			entry.latest = version;
			entry.times[version] = new Date().toISOString();
			packages.set(name, entry);
		},
		env: () => ({
			HTTPS_PROXY: proxyUrl,
			https_proxy: proxyUrl,
			// The sandbox, the editor and n8n's task broker stay direct.
			NO_PROXY: '127.0.0.1,localhost',
			no_proxy: '127.0.0.1,localhost',
			npm_config_registry: `${REGISTRY_ORIGIN}/`,
			npm_config_cafile: caFile,
			NODE_EXTRA_CA_CERTS: caFile,
		}),
		close: async () => {
			proxy.closeAllConnections();
			registry.closeAllConnections();
			await new Promise<void>((resolve) => proxy.close(() => resolve()));
		},
	};
}

/** Reads the package.json of an npm tarball (`package/package.json`). */
export async function readTarballManifest(tarballFile: string): Promise<PublishedVersion> {
	const { stdout } = await run('tar', ['-xzOf', tarballFile, 'package/package.json'], { maxBuffer: 10 * 1024 * 1024 });
	return { manifest: JSON.parse(stdout), tarball: await fs.readFile(tarballFile) };
}
