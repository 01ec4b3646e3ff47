'use strict';
// The plotly.js core the dashboard needs: what plotly.js/lib/core (src/core.js) sets up, with only the layout
// components the figures use (frontend/figures.py). Left out: updatemenus, sliders, rangeslider, rangeselector,
// images, errorbars and annotations3d (plotly.js asks its registry for a component and gets a no-op when it is
// not registered); tests/frontend/test_plotly_bundle.py fails when a figure uses one of them.
// the same order of evaluation as plotly.js's core: the promise polyfill and the plot CSS first
require('native-promise-only');
require('plotly.js/build/plotcss');

var Registry = require('plotly.js/src/registry');
var plotApi = require('plotly.js/src/plot_api');
var Plots = require('plotly.js/src/plots/plots');
var Fx = require('plotly.js/src/components/fx');

exports.version = require('plotly.js/src/version').version;
exports.register = Registry.register;

Object.keys(plotApi).forEach(function (name) {
    // the public methods (newPlot, react, purge, ...); those starting with _ are registered for internal use only
    if (name.charAt(0) !== '_') exports[name] = plotApi[name];
    Registry.register({ moduleType: 'apiMethod', name: name, fn: plotApi[name] });
});

Registry.register(require('plotly.js/src/traces/scatter'));

// in plotly.js's order: the legend after shapes (its defaults read them), fx after the legend
Registry.register([
    require('plotly.js/src/components/annotations'),
    require('plotly.js/src/components/selections'),
    require('plotly.js/src/components/shapes'),
    require('plotly.js/src/components/grid'),
    require('plotly.js/src/components/colorscale'),
    require('plotly.js/src/components/colorbar'),
    require('plotly.js/src/components/legend'),
    require('plotly.js/src/components/fx'),
    require('plotly.js/src/components/modebar'),
]);

Registry.register([require('plotly.js/src/locale-en'), require('plotly.js/src/locale-en-us')]);

exports.Icons = require('plotly.js/src/fonts/ploticon');
exports.Plots = { resize: Plots.resize, graphJson: Plots.graphJson, sendDataToCloud: Plots.sendDataToCloud };
exports.Fx = { hover: Fx.hover, unhover: Fx.unhover, loneHover: Fx.loneHover, loneUnhover: Fx.loneUnhover };
exports.Snapshot = require('plotly.js/src/snapshot');
exports.PlotSchema = require('plotly.js/src/plot_api/plot_schema');
