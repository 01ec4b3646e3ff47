/* Draw every figure of the page from its JSON (built in Python, frontend/figures.py), then flag the page with
   data-chart-ready="1". A click on a sector of a tree figure zooms into that node's subtree when it has children
   (layout.meta.zoom, the page's ?root=), goes back up from the centre (layout.meta.up), else opens the node. */
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("figure-config").textContent);

  function figureOf(el) {
    var source = document.getElementById("fig-" + el.dataset.figure);
    return source ? JSON.parse(source.textContent) : null;
  }

  function attach(el) {
    if (!el.dataset.clickable || el.dataset.bound) return;
    el.dataset.bound = "1";
    var open = function (event) {
      var point = event && event.points && event.points[0];
      var meta = (el.layout && el.layout.meta) || {};
      var id = point && (point.id || point.label);
      if (point && meta.root && id === meta.root && meta.up) {
        window.location.href = meta.up; /* the centre: back up one level */
        return false;
      }
      if (point && meta.zoom && meta.zoom[id]) {
        window.location.href = meta.zoom[id]; /* a node with children: zoom into its subtree */
        return false;
      }
      if (point && point.customdata) {
        window.location.href = point.customdata;
        return false;
      }
      return true;
    };
    el.on("plotly_sunburstclick", open);
    el.on("plotly_icicleclick", open);
  }

  function themed(el, fig) {  // the figure in the page's theme (js/theme.js); the original kept for a redraw
    el.fairwayFigure = fig;
    return window.FairwayTheme ? window.FairwayTheme.apply(fig) : fig;
  }

  function draw(el, fig) {
    var shown = themed(el, fig);
    return Plotly.newPlot(el, shown.data, shown.layout, config).then(function () { attach(el); });
  }

  function redraw(el, fig) {
    var shown = themed(el, fig);
    return Plotly.react(el, shown.data, shown.layout, config).then(function () { attach(el); });
  }

  function refresh() {  // every figure again (the browser's colour scheme changed)
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      if (el.fairwayFigure) redraw(el, el.fairwayFigure);
    });
  }

  function start() {
    var jobs = [];
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      var fig = figureOf(el);
      if (fig) jobs.push(draw(el, fig));
    });
    Promise.all(jobs).then(function () { document.body.dataset.chartReady = "1"; });
  }

  window.FairwayCharts = { config: config, redraw: redraw, refresh: refresh };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

/* Option forms (resource, window, figure style) apply as soon as a choice changes; their Show button stays
   for keyboard users who prefer it and for browsers without JavaScript. */
document.querySelectorAll("form[data-autosubmit]").forEach(function (form) {
  form.addEventListener("change", function () { form.submit(); });
});
