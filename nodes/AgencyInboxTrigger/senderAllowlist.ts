/** The service's sender addresses, from the spec ("Delivery rules", rule 4). */
export const SENDER_IPV4_ADDRESSES = ['52.215.16.239', '54.216.8.72', '63.33.109.123'];
export const SENDER_IPV6_RANGE = '2a05:d028:17:8000::/56';

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const HEXTET = /^[0-9a-f]{1,4}$/i;

function parseIpv4(address: string): number[] | undefined {
	const match = IPV4.exec(address);
	if (!match) return undefined;
	const octets = match.slice(1).map(Number);
	return octets.every((octet) => octet <= 255) ? octets : undefined;
}

function hextets(part: string): string[] {
	return part === '' ? [] : part.split(':');
}

/** The eight 16-bit groups of an IPv6 address (`::`, a dotted IPv4 tail and a zone allowed), or undefined. */
export function parseIpv6(address: string): number[] | undefined {
	let text = address.split('%')[0];
	const tail: number[] = [];
	const lastColon = text.lastIndexOf(':');
	if (lastColon === -1) return undefined;
	if (text.includes('.', lastColon)) {
		const octets = parseIpv4(text.slice(lastColon + 1));
		if (!octets) return undefined;
		tail.push((octets[0] << 8) | octets[1], (octets[2] << 8) | octets[3]);
		text = text.slice(0, lastColon + 1);
		if (!text.endsWith('::')) text = text.slice(0, -1);
	}
	const halves = text.split('::');
	if (halves.length > 2) return undefined;
	const head = hextets(halves[0]);
	const rest = halves.length === 2 ? hextets(halves[1]) : [];
	if (![...head, ...rest].every((group) => HEXTET.test(group))) return undefined;
	const explicitCount = head.length + rest.length + tail.length;
	if (halves.length === 1 ? explicitCount !== 8 : explicitCount > 7) return undefined;
	const zeros = new Array<number>(8 - explicitCount).fill(0);
	const toNumber = (group: string) => parseInt(group, 16);
	return [...head.map(toNumber), ...zeros, ...rest.map(toNumber), ...tail];
}

/** `::ffff:a.b.c.d`: how a dual-stack server reports an IPv4 client. */
function mappedIpv4(groups: number[]): string | undefined {
	if (groups.slice(0, 5).some((group) => group !== 0) || groups[5] !== 0xffff) return undefined;
	return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.');
}

function inIpv6Range(groups: number[], range: string): boolean {
	const [prefix, lengthText] = range.split('/');
	const network = parseIpv6(prefix)!;
	let bitsLeft = Number(lengthText);
	for (let index = 0; index < 8 && bitsLeft > 0; index++) {
		const bits = Math.min(16, bitsLeft);
		const mask = (0xffff << (16 - bits)) & 0xffff;
		if ((groups[index] & mask) !== (network[index] & mask)) return false;
		bitsLeft -= bits;
	}
	return true;
}

/**
 * Whether a client address (as n8n resolves it: Express's `req.ip`, which honours N8N_PROXY_HOPS)
 * is one of the service's senders.
 */
export function isServiceSender(address: string | undefined): boolean {
	if (!address) return false;
	const ipv4 = parseIpv4(address);
	if (ipv4) return SENDER_IPV4_ADDRESSES.includes(ipv4.join('.'));
	const groups = parseIpv6(address);
	if (!groups) return false;
	const mapped = mappedIpv4(groups);
	if (mapped) return SENDER_IPV4_ADDRESSES.includes(mapped);
	return inIpv6Range(groups, SENDER_IPV6_RANGE);
}
