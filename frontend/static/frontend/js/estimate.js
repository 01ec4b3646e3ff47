/* A waiting job's page while its start estimate is being computed (off the page's process, by the replay worker):
   ask the page for the estimate alone (?estimate=1, a small JSON answer) every few seconds and put its paragraph in
   place of the "estimating" line once it is there; stop after a few minutes (the line says to reload). */
(function () {
  "use strict";
  var line = document.querySelector('[data-testid="job-start-estimate"][data-state="pending"]');
  if (!line || !line.dataset.pollUrl) return;
  var url = new URL(line.dataset.pollUrl, window.location.href).toString();
  var every = 3000;
  var left = 60;

  function poll() {
    left -= 1;
    fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (s) {
        if (s && s.state !== "pending") {
          if (s.html) line.outerHTML = s.html;
          else line.remove();  // it no longer waits
          return;
        }
        if (left > 0) window.setTimeout(poll, every);
      })
      .catch(function () { if (left > 0) window.setTimeout(poll, every * 2); });
  }
  window.setTimeout(poll, every);
})();
