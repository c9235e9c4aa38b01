import react from '@vitejs/plugin-react';
import { defineConfig } from 'vitest/config';

// The service serves the build under /ui/ (src/http/routes/ui.ts); in `npm run dev -w ui` Vite
// forwards the API to a service on :8000.
const API_PATHS = ['/auth', '/artifacts', '/packages', '/distributions', '/security', '/upload', '/dashboard', '/audit', '/settings', '/sbom', '/import', '/downloads', '/health'];

export default defineConfig({
  base: '/ui/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false, chunkSizeWarningLimit: 400 },
  server: { proxy: Object.fromEntries(API_PATHS.map((path) => [path, 'http://localhost:8000'])) },
  test: { environment: 'happy-dom', include: ['src/**/*.test.{ts,tsx}'], setupFiles: ['src/test-setup.ts'] },
});
