/* The jobs list's long name filters (namespace, queue, quota group): a text box whose <datalist> is filled, as one
   types, with the names the server suggests (frontend.views.jobs.job_filter_names). Without this script the box
   still takes an exact name. */
(function () {
  "use strict";
  var script = document.currentScript;
  var url = script && script.dataset.url;
  if (!url) return;

  function attach(input) {
    var list = document.getElementById(input.getAttribute("list"));
    var timer = null, asked = null;
    function fill(names) {
      var frag = document.createDocumentFragment();
      names.forEach(function (name) {
        var option = document.createElement("option");
        option.value = name;
        frag.appendChild(option);
      });
      list.replaceChildren(frag);
    }
    function ask() {
      var typed = input.value;
      if (typed === asked) return;
      asked = typed;
      var sep = url.indexOf("?") < 0 ? "?" : "&";
      var href = url + sep + "field=" + encodeURIComponent(input.dataset.suggest) + "&q=" + encodeURIComponent(typed);
      fetch(href, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : { names: [] }; })
        .then(function (data) { if (input.value === typed) fill(data.names || []); })
        .catch(function () { asked = null; });
    }
    input.addEventListener("input", function () {
      clearTimeout(timer);
      timer = setTimeout(ask, 150);
    });
    input.addEventListener("focus", ask);
  }

  document.querySelectorAll("input[data-suggest]").forEach(attach);
})();
