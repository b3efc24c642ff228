/* Charts of the monitoring report (`ranklens monitor report --html`): reads the JSON embedded in the page and
 * draws with RLCharts, as the dashboard's Overview and Slices pages do. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("rl-data").textContent);
  var C = window.RLCharts;
  // a model version keeps one colour: its training series dashed, its baseline dotted
  var versions = [];
  data.series.forEach(function (s) {
    var v = s.name.split(" \u00b7 ").slice(0, 2).join(" \u00b7 ");
    if (versions.indexOf(v) < 0) versions.push(v);
  });
  function colour(name) {
    var i = versions.indexOf(name.split(" \u00b7 ").slice(0, 2).join(" \u00b7 "));
    return C.palette[(i < 0 ? 0 : i) % C.palette.length];
  }
  function draw() {
    C.line(document.getElementById("mr-overview"), {
      series: data.series.map(function (s) {
        return {name: s.name, points: s.points, dash: s.dash, color: colour(s.name)};
      }),
      refs: data.refs.map(function (r) { return {value: r.value, label: r.label, color: colour(r.name)}; }),
      markers: data.markers, markerLabel: "alert", x: {type: "time", label: "window start (UTC)"},
      y: {label: data.measure}, height: 360, title: data.measure + " over time"
    });
    var hm = document.getElementById("mr-heatmap");  // absent when there is no baseline to compare with
    if (hm) C.heatmap(hm, {
      rows: data.heatmap.rows, cols: data.heatmap.cols, values: data.heatmap.values, counts: data.heatmap.counts,
      centers: data.heatmap.centers, label: data.measure, title: "slice x time"
    });
  }
  draw();
  var t = null;
  window.addEventListener("resize", function () { clearTimeout(t); t = setTimeout(draw, 150); });
})();
