import { defineConfig } from "vitest/config";
export default defineConfig(() => ({ test: { hideSkippedTests: true, testTimeout: 30_000, fileParallelism: false, setupFiles: ["./truncate.setup.mjs"] } }));
