/** Types of tempDirs.js (plain CommonJS, shared with jest's globalSetup). */
export declare function makeTempDir(name: string): string;
export declare function removeTempDir(dir: string): void;
export declare function removeAbandonedTempDirs(root?: string): string[];
export declare const OWNER_FILE: string;
