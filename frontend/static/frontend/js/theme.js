/* The theme and the header, on every page.
   Dark theme: fairway.css switches its colour variables with the browser's prefers-color-scheme. The Plotly figures
   are built in Python with the light theme's colours (frontend/figures.py); FairwayTheme.apply(fig) maps each of
   those colours to the CSS variable that holds its twin in the current theme (a no-op in the light theme), and
   charts.js draws every figure through it; when the browser's setting changes, every figure is drawn again.
   Cluster switcher: picking a cluster shows the same page for that cluster (?cluster=; the server keeps the choice). */
(function () {
  "use strict";
  var VARS = {
    "#1f2328": "--ink", "#59636e": "--muted", "#e6e9ed": "--chart-grid", "#c4cad1": "--chart-axis",
    "#a0a7b0": "--chart-neutral", "#f1f1f1": "--chart-balanced", "#ffffff": "--card", "#fff": "--card",
    "white": "--card"
  };
  var query = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function isDark() { return Boolean(query && query.matches); }

  function palette() {
    var css = getComputedStyle(document.documentElement);
    var out = {};
    Object.keys(VARS).forEach(function (light) {
      var value = css.getPropertyValue(VARS[light]).trim();
      if (value) out[light] = value;
    });
    return out;
  }

  function recolour(value, colours) {
    if (typeof value === "string") {
      var twin = colours[value.toLowerCase()];
      return twin || value;
    }
    if (Array.isArray(value)) return value.map(function (v) { return recolour(v, colours); });
    if (value && typeof value === "object") {
      var out = {};
      Object.keys(value).forEach(function (key) { out[key] = recolour(value[key], colours); });
      return out;
    }
    return value;
  }

  function apply(fig) {
    if (!isDark() || !fig) return fig;
    var colours = palette();
    var layout = recolour(fig.layout || {}, colours);
    var css = getComputedStyle(document.documentElement);
    var card = css.getPropertyValue("--card").trim();
    var ink = css.getPropertyValue("--ink").trim();
    var line = css.getPropertyValue("--line").trim();
    layout.hoverlabel = Object.assign({}, layout.hoverlabel || {}, { bgcolor: card, bordercolor: line });
    layout.hoverlabel.font = Object.assign({}, layout.hoverlabel.font || {}, { color: ink });
    layout.modebar = Object.assign({}, layout.modebar || {}, { bgcolor: "rgba(0,0,0,0)", color: colours["#59636e"], activecolor: ink });
    return { data: recolour(fig.data || [], colours), layout: layout };
  }

  window.FairwayTheme = { apply: apply, isDark: isDark };

  if (query) {
    var redraw = function () { if (window.FairwayCharts && window.FairwayCharts.refresh) window.FairwayCharts.refresh(); };
    if (query.addEventListener) query.addEventListener("change", redraw);
    else if (query.addListener) query.addListener(redraw);
  }

  function wireSwitch() {
    document.querySelectorAll("form.cluster-switch select").forEach(function (select) {
      select.addEventListener("change", function () { select.form.submit(); });
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", wireSwitch);
  else wireSwitch();
})();
