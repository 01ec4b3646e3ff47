/* Draw every figure of the page from its JSON (built in Python, frontend/figures.py). The figures on screen are
   drawn first (each figure's box takes its height before any is drawn, so that "on screen" is where it will be);
   once they are, the page sets performance.mark("fairway:charts-ready") (the "interactive" moment
   bench/bench_paint.py measures). The others are drawn when they come near the viewport or, one at a time, when
   the browser is idle; a figure without a box (in a closed section) waits until it is shown. When every figure
   that has a box is drawn the page is flagged with data-chart-ready="1". A click on a sector of a tree figure
   zooms into that node's subtree when it has children (layout.meta.zoom, the page's ?root=), goes back up from
   the centre (layout.meta.up), else opens the node. */
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

  /* The box takes the figure's height before the figure is drawn: what is on screen is known from the start,
     and nothing below the figure moves when it is drawn. */
  function reserve(el, fig) {
    var height = fig && fig.layout && fig.layout.height;
    if (height) el.style.minHeight = height + "px";
  }

  function themed(el, fig) {  // the figure in the page's theme (js/theme.js); the original kept for a redraw
    el.fairwayFigure = fig;
    return window.FairwayTheme ? window.FairwayTheme.apply(fig) : fig;
  }

  /* A figure with nothing to draw but a sentence (frontend/figures.py's _empty: layout.meta.note) is shown as
     that sentence, where plotly would place its annotation (centred in the plot area inside the margins), in
     the annotation's font: a plotly drawing of an empty figure (axes, modebar, the text measured) cost as much as
     a chart's. */
  function noteOf(fig) {
    var meta = fig && fig.layout && fig.layout.meta;
    return meta && typeof meta.note === "string" ? meta.note : null;
  }

  function showNote(el, fig) {
    var layout = fig.layout;
    var margin = layout.margin || {};
    var note = el.fairwayNote || el.appendChild(document.createElement("p"));
    var mark = (layout.annotations || [])[0] || {};
    el.fairwayNote = note;
    el.fairwayFigure = fig;
    note.className = "chart-note";
    note.style.height = layout.height + "px";
    note.style.padding = [margin.t, margin.r, margin.b, margin.l].map(function (v) { return (v || 0) + "px"; }).join(" ");
    note.style.fontFamily = (layout.font && layout.font.family) || "";
    note.style.fontSize = ((mark.font && mark.font.size) || (layout.font && layout.font.size) || 14) + "px";
    note.textContent = noteOf(fig);
    return Promise.resolve();
  }

  function plot(el, fig) {  // the first plotly drawing of el
    var shown = themed(el, fig);
    return Plotly.newPlot(el, shown.data, shown.layout, config).then(function () { attach(el); });
  }

  function draw(el) {  // the first drawing of el (once; later ones go through redraw)
    if (!el.fairwayDrawn) {
      var fig = el.fairwayPending;
      el.fairwayPending = null;
      el.fairwayDrawn = noteOf(fig) !== null ? showNote(el, fig) : plot(el, fig);
      if (el.fairwayDone) el.fairwayDrawn.then(el.fairwayDone);
    }
    return el.fairwayDrawn;
  }

  function redraw(el, fig) {
    if (!el.fairwayDrawn) {  // not drawn yet (off screen): draw the newest figure when it is shown
      el.fairwayPending = fig;
      reserve(el, fig);
      return Promise.resolve();
    }
    return el.fairwayDrawn.then(function () {
      reserve(el, fig);
      if (el.fairwayNote) {  // a sentence so far: another one, or the figure's first plotly drawing
        if (noteOf(fig) !== null) return showNote(el, fig);
        el.removeChild(el.fairwayNote);
        el.fairwayNote = null;
        el.fairwayDrawn = plot(el, fig);
        return el.fairwayDrawn;
      }
      var shown = themed(el, fig);
      return Plotly.react(el, shown.data, shown.layout, config).then(function () { attach(el); });
    });
  }

  function refresh() {  // every figure again (the browser's colour scheme changed)
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      if (el.fairwayDrawn) redraw(el, el.fairwayFigure);
    });
  }

  function hasBox(el) { return el.getClientRects().length > 0; }

  function onScreen(el) {
    var box = el.getBoundingClientRect();
    return hasBox(el) && box.bottom > 0 && box.top < window.innerHeight && box.right > 0 && box.left < window.innerWidth;
  }

  function whenIdle(callback) {
    if (window.requestIdleCallback) window.requestIdleCallback(callback, { timeout: 1000 });
    else setTimeout(callback, 50);
  }

  function start() {
    var figures = [];
    document.querySelectorAll("[data-figure]").forEach(function (el) {
      el.fairwayPending = figureOf(el);
      if (!el.fairwayPending) return;
      reserve(el, el.fairwayPending);
      el.fairwayShown = new Promise(function (resolve) { el.fairwayDone = resolve; });
      figures.push(el);
    });
    var first = figures.filter(onScreen);
    var later = figures.filter(function (el) { return first.indexOf(el) < 0; });
    Promise.all(first.map(draw)).then(function () {
      if (window.performance && performance.mark) performance.mark("fairway:charts-ready");
      if (window.IntersectionObserver) {
        var observer = new IntersectionObserver(function (entries) {
          entries.forEach(function (entry) {
            if (entry.isIntersecting) { observer.unobserve(entry.target); draw(entry.target); }
          });
        }, { rootMargin: "200px 0px" });
        later.forEach(function (el) { observer.observe(el); });
      }
      var idle = later.filter(hasBox);
      var next = function () {  // the rest, one figure per idle period
        var el = idle.shift();
        if (!el) return;
        draw(el).then(function () { whenIdle(next); });
      };
      whenIdle(next);
      return Promise.all(figures.filter(hasBox).map(function (el) { return el.fairwayShown; }));
    }).then(function () { document.body.dataset.chartReady = "1"; });
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
