export declare const executablePath: string | undefined;
export declare const args: string[];
