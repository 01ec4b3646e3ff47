/* Live refresh: every few seconds fetch the page's own data (?live=1: figures and HTML fragments rendered by the
   server), Plotly.react the figures and swap the fragments, without reloading the page. Pauses when the tab is
   hidden or the user presses Pause (WCAG 2.2.2), backs off on errors, and never replaces a fragment that holds
   the keyboard focus. document.body.dataset.liveTick counts the refreshes (the browser tests wait on it). */
(function () {
  "use strict";
  var seconds = Number(document.body.dataset.liveSeconds || 0);
  if (!seconds || !window.FairwayCharts) return;
  var paused = false;
  var failures = 0;
  var timer = null;
  var button = document.getElementById("live-pause");
  var dot = document.getElementById("live-dot");
  var stamp = document.getElementById("live-updated");
  var state = document.getElementById("live-state");

  function liveUrl() {
    var url = new URL(window.location.href);
    url.searchParams.set("live", "1");
    return url.toString();
  }

  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(tick, seconds * 1000 * Math.min(1 + failures, 6));
  }

  function apply(data) {
    var jobs = [];
    Object.keys(data.fragments || {}).forEach(function (id) {
      var el = document.getElementById(id);
      if (el && !el.contains(document.activeElement)) el.innerHTML = data.fragments[id];
    });
    Object.keys(data.figures || {}).forEach(function (key) {
      var el = document.querySelector('[data-figure="' + key + '"]');
      if (el) jobs.push(window.FairwayCharts.redraw(el, data.figures[key]));
    });
    return Promise.all(jobs).then(function () {
      if (stamp && data.updated) {
        stamp.setAttribute("datetime", data.updated);
        stamp.textContent = new Date(data.updated).toISOString().slice(11, 19);
      }
      document.body.dataset.liveTick = String(Number(document.body.dataset.liveTick || 0) + 1);
    });
  }

  function tick() {
    if (paused || document.hidden) return schedule();
    fetch(liveUrl(), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (response) {
        if (!response.ok || response.redirected) throw new Error("HTTP " + response.status);
        return response.json();
      })
      .then(apply)
      .then(function () { failures = 0; if (dot) dot.classList.remove("paused"); })
      .catch(function () { failures += 1; if (dot) dot.classList.add("paused"); })
      .then(schedule);
  }

  if (button) {
    button.addEventListener("click", function () {
      paused = !paused;
      button.setAttribute("aria-pressed", paused ? "true" : "false");
      button.textContent = paused ? "Resume" : "Pause";
      if (state) state.textContent = paused ? "Paused" : state.dataset.live;
      if (dot) dot.classList.toggle("paused", paused);
      if (!paused) tick();
    });
  }
  document.addEventListener("visibilitychange", function () { if (!document.hidden && !paused) tick(); });
  schedule();
})();
