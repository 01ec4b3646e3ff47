// Builds frontend/static/frontend/vendor/plotly-fairway.min.js from index.js with the pinned esbuild and plotly.js
// (package-lock.json), the way plotly.js builds its own dist bundles (an IIFE defining the global Plotly).
// Run through `make plotly` (npm ci, then this); the output is the same bytes for the same lock file.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const version = JSON.parse(readFileSync(require.resolve('plotly.js/package.json'), 'utf8')).version;
const traces = [...readFileSync('index.js', 'utf8').matchAll(/require\('plotly\.js\/lib\/(\w+)'\)/g)]
    .map((m) => m[1])
    .filter((name) => name !== 'core');

await build({
    entryPoints: ['index.js'],
    outfile: '../../frontend/static/frontend/vendor/plotly-fairway.min.js',
    bundle: true,
    minify: true,
    format: 'iife',
    globalName: 'Plotly',
    target: 'es2016',
    define: { global: 'window', 'define.amd': 'false' },
    // the only stylesheet in the graph is maplibre's, required when a map trace registers: none does here
    loader: { '.css': 'empty' },
    legalComments: 'none',
    banner: {
        js:
            `/* plotly.js v${version} partial bundle; traces: ${traces.join(', ')}. ` +
            'Copyright 2012-2026, Plotly, Inc. MIT license. Built by `make plotly` from tools/plotly. */',
    },
    logLevel: 'info',
});
