/* Renders /api/openapi.json as a readable page (no external viewer). */
(function () {
  "use strict";
  var esc = window.RLCharts.esc;
  fetch("/api/openapi.json", {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (spec) {
    var h = "";
    Object.keys(spec.paths).forEach(function (path) {
      var op = spec.paths[path].get, example = path;
      h += "<section class='card'><h2><span class='badge good'>GET</span> <code>" + esc(path) + "</code></h2><p>" +
        esc(op.summary) + (op.description ? " " + esc(op.description) : "") + "</p>";
      if (op.parameters.length) {
        h += "<table class='rl'><thead><tr><th class='l'>parameter</th><th class='l'>type</th><th class='l'>default</th>" +
          "<th class='l'>description</th></tr></thead><tbody>";
        op.parameters.forEach(function (p) {
          var s = p.schema || {}, type = (s.type || "") + (s["enum"] ? ": " + s["enum"].join(" | ") : "") +
            (s.minimum !== undefined ? " [" + s.minimum + ", " + s.maximum + "]" : "");
          h += "<tr><td class='l mono'>" + esc(p.name) + (p.required ? " <b>*</b>" : "") + "</td><td class='l'>" + esc(type) +
            "</td><td class='l mono'>" + esc(s["default"] === undefined ? "" : s["default"]) + "</td><td class='l wrap'>" +
            esc(p.description || "") + "</td></tr>";
        });
        h += "</tbody></table>";
      }
      if (path !== "/api/explain" && path !== "/api/compare") h += "<p class='notes'>Try: <a href='" + esc(example) + "'>" + esc(example) + "</a></p>";
      h += "</section>";
    });
    document.getElementById("endpoints").innerHTML = h;
  }).catch(function (e) {
    var box = document.getElementById("error"); box.hidden = false; box.textContent = String(e);
  });
})();
