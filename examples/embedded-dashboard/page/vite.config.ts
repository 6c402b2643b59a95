// Vite builds the page; `@quarry/source` lets it use @quarry/client's TypeScript sources in this
// repository (a site using the published package needs no such condition).
import { defaultClientConditions, defineConfig } from 'vite';

export default defineConfig({
  resolve: { conditions: ['@quarry/source', ...defaultClientConditions] },
  build: { outDir: 'dist', emptyOutDir: true },
});
