/* A replay run's page while the run is queued or running: poll its status (a small JSON answer) every few seconds,
   move the progress bar, and reload the page once the run has ended (the results, the error or the cancel). */
(function () {
  "use strict";
  var box = document.getElementById("replay-run");
  if (!box || !box.dataset.statusUrl) return;
  var bar = document.getElementById("replay-progress");
  var percent = document.getElementById("replay-percent");
  var phase = document.getElementById("replay-phase");
  var state = document.getElementById("replay-state");
  var every = 2000;

  function poll() {
    fetch(box.dataset.statusUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (s) {
        if (!s) { window.setTimeout(poll, every * 2); return; }
        if (bar) { bar.value = s.percent; bar.textContent = s.percent + "%"; }
        if (percent) percent.textContent = s.percent + "%";
        if (phase && s.phase) phase.textContent = s.phase;
        if (state) state.textContent = s.state;
        if (s.state !== "queued" && s.state !== "running") { window.location.reload(); return; }
        window.setTimeout(poll, every);
      })
      .catch(function () { window.setTimeout(poll, every * 2); });
  }
  window.setTimeout(poll, every);
})();
