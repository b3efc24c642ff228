/* Charts of the offline report: reads the JSON embedded in the page and draws with RLCharts. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("rl-data").textContent);
  var C = window.RLCharts;
  function draw() {
    (data.curves || []).forEach(function (cv, i) {
      C.line(document.getElementById("curve-" + i), {
        series: cv.series.map(function (s) {
          return {name: s.name, points: s.points.map(function (p) { return {x: p[0], y: p[1]}; })};
        }),
        x: {type: "log", label: "cutoff k", tipLabel: "k"}, y: {label: "mean " + cv.family + "@k"}, height: 320,
        title: cv.family + "@k curves"
      });
    });
    (data.measures || []).forEach(function (m, i) {
      var means = document.getElementById("means-" + i);
      if (means) C.forest(means, {rows: m.means, zero: null, x: {label: m.measure + ": mean with " + data.ci_label}});
      var diffs = document.getElementById("diffs-" + i);
      if (diffs) C.forest(diffs, {rows: m.diffs, zero: 0,
        x: {label: m.measure + ": run - " + data.baseline + " (" + data.ci_label + "; filled = significant)"}});
      (m.per_query || []).forEach(function (pq, j) {
        C.bars(document.getElementById("pq-" + i + "-" + j), {
          values: pq.values, labels: pq.labels, height: 220,
          x: {label: pq.xlabel}, y: {label: pq.ylabel}
        });
      });
    });
  }
  draw();
  var t = null;
  window.addEventListener("resize", function () { clearTimeout(t); t = setTimeout(draw, 150); });
})();
