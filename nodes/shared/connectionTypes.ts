import { NodeConnectionTypes } from 'n8n-workflow';

/**
 * The main connection type. `NodeConnectionTypes` exists from n8n-workflow 1.83.0 on; older n8n
 * (README, "Compatibility") has only the `NodeConnectionType` enum, whose `Main` is the same 'main'.
 */
export const MAIN_CONNECTION = NodeConnectionTypes?.Main ?? 'main';
