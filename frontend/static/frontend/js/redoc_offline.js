/* ReDoc's sidebar always draws its maker's logo from a CDN (redoc.standalone.js: an <img> beside "API docs by
   Redocly"). This script, loaded before ReDoc, gives that one image an empty local picture instead, however its
   src is set (attribute or property), so that the API docs page asks nothing of another host (the page's
   Content-Security-Policy would block the request anyway; this keeps the browser from trying). */
(function () {
  "use strict";
  var CDN_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg";
  var EMPTY = "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='1' height='1'/%3E";
  function local(value) {
    return String(value) === CDN_LOGO ? EMPTY : value;
  }
  var setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    return setAttribute.call(this, name, String(name).toLowerCase() === "src" ? local(value) : value);
  };
  var src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    configurable: true,
    enumerable: src.enumerable,
    get: src.get,
    set: function (value) {
      src.set.call(this, local(value));
    },
  });
})();
