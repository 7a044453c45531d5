import { NodeConnectionTypes } from 'n8n-workflow';

/**
 * What differs in the older n8n versions the package supports (README, "Compatibility"), told apart
 * by `NodeConnectionTypes`, which n8n-workflow exports from 1.83.0 on.
 */
const hasConnectionTypes = NodeConnectionTypes !== undefined;

/** Before, n8n-workflow had only the `NodeConnectionType` enum, whose `Main` is the same 'main'. */
export const MAIN_CONNECTION = hasConnectionTypes ? NodeConnectionTypes.Main : 'main';

/**
 * Before, n8n copied the description of a node usable as an AI tool with structuredClone, which
 * throws on the functions in ours, and every n8n command failed (seen in 1.82.3; 1.85.4 uses deepCopy).
 */
export const USABLE_AS_TOOL = hasConnectionTypes ? true : undefined;
