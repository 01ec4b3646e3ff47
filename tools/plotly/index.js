'use strict';
// The plotly.js core with the layout components the figures use (core.js) and the trace types they draw
// (frontend/figures.py; build.mjs lists the same names in the bundle's first line, which
// tests/frontend/test_plotly_bundle.py checks against the figures).
var Plotly = require('./core');

Plotly.register([
    require('plotly.js/lib/bar'),
    require('plotly.js/lib/icicle'),
    require('plotly.js/lib/scatter'),
    require('plotly.js/lib/sunburst'),
]);

module.exports = Plotly;
