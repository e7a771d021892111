/** The six files of issue 18. */
export declare const six: string[];
/** Stryker `mutate` patterns per chunk; together they cover lib/core exactly once. */
export declare const chunks: Record<string, string[]>;
