// Vite builds the page; `@quarry/source` lets it use @quarry/client's TypeScript sources in this
// repository (a site using the published package needs no such condition).
import { defaultClientConditions, defineConfig } from 'vite';

// biome-ignore lint/style/noDefaultExport: Vite reads its config file's default export.
export default defineConfig({
  resolve: { conditions: ['@quarry/source', ...defaultClientConditions] },
  build: { outDir: 'dist', emptyOutDir: true },
});
