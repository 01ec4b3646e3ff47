// Builds frontend/static/frontend/vendor/plotly-fairway.min.js from index.js with the pinned esbuild and plotly.js
// (package-lock.json), the way plotly.js builds its own dist bundles (an IIFE defining the global Plotly).
// Run through `make plotly` (npm ci, then this); the output is the same bytes for the same lock file.
//
// Then each CommonJS module's factory, `K((e,t)=>{...})` in esbuild's output, is put in parentheses,
// `K(((e,t)=>{...}))`: V8 compiles a parenthesized function eagerly, on the thread that parses the script while it
// downloads, instead of on the page's main thread when the bundle runs them all (once each, as it loads). The
// functions inside stay lazy. Measured in Chromium: the bundle's run on the main thread 53 -> 17 ms (First paint in
// docs/dashboard.md). Parentheses only: the code does the same.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { parse } from 'acorn';
import { build } from 'esbuild';

const OUTFILE = '../../frontend/static/frontend/vendor/plotly-fairway.min.js';

const require = createRequire(import.meta.url);
const version = JSON.parse(readFileSync(require.resolve('plotly.js/package.json'), 'utf8')).version;
const traces = [...readFileSync('index.js', 'utf8').matchAll(/require\('plotly\.js\/lib\/(\w+)'\)/g)]
    .map((m) => m[1])
    .filter((name) => name !== 'core');

const built = await build({
    entryPoints: ['index.js'],
    outfile: OUTFILE,
    write: false,
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

// esbuild's __commonJS helper, minified: `var K=(e,t)=>()=>{try{return t||e((t={exports:{}}).exports,t),...`
function parenthesizeFactories(code) {
    const helper = /var ([\w$]+)=\(\w,\w\)=>\(\)=>\{try\{return \w\|\|\w\(\(\w=\{exports:\{\}\}\)\.exports,\w\)/.exec(code);
    if (!helper) throw new Error("esbuild's CommonJS helper not found: build.mjs needs updating for this esbuild");
    const factories = [];
    const walk = (node) => {
        if (Array.isArray(node)) return node.forEach(walk);
        if (!node || typeof node.type !== 'string') return;
        if (node.type === 'CallExpression' && node.callee.type === 'Identifier' && node.callee.name === helper[1] &&
            node.arguments.length === 1 && node.arguments[0].type === 'ArrowFunctionExpression') {
            factories.push(node.arguments[0]);
        }
        for (const key of Object.keys(node)) if (node[key] && typeof node[key] === 'object') walk(node[key]);
    };
    walk(parse(code, { ecmaVersion: 2020 }));
    if (factories.length < 100) throw new Error(`only ${factories.length} module factories found`);
    let out = '';
    let at = 0;
    for (const f of factories.sort((a, b) => a.start - b.start)) {
        out += code.slice(at, f.start) + '(' + code.slice(f.start, f.end) + ')';
        at = f.end;
    }
    return { code: out + code.slice(at), count: factories.length };
}

const { code, count } = parenthesizeFactories(built.outputFiles[0].text);
writeFileSync(OUTFILE, code);
console.log(`${OUTFILE}: ${code.length} bytes, ${count} module factories compiled eagerly`);
