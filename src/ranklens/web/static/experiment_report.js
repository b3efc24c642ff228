/* Charts of the experiment report (`ranklens experiment report --html`): the effect of each treatment arm day
 * by day with its sequential interval (shaded), the fixed-horizon interval (dotted) and the group-sequential
 * boundary (dashed), drawn with RLCharts from the JSON embedded in the page. */
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("rl-data").textContent);
  var C = window.RLCharts;
  function draw() {
    data.charts.forEach(function (c) {
      var series = [{name: "effect (sequential interval)", points: c.points, color: C.palette[0]},
                    {name: "fixed-horizon interval", points: c.fixed.map(function (p) {
                      return {x: p.x, y: p.lo}; }), dash: true, color: "#9ca3af"},
                    {name: "", points: c.fixed.map(function (p) { return {x: p.x, y: p.hi}; }), dash: true,
                     color: "#9ca3af"}];
      var upper = c.boundary.filter(function (p) { return p.y !== null; });
      if (upper.length) {
        series.push({name: "boundary", points: upper, dash: true, color: C.palette[3]});
        series.push({name: "", points: upper.map(function (p) { return {x: p.x, y: -p.y}; }), dash: true,
                     color: C.palette[3]});
      }
      C.line(document.getElementById(c.id), {
        series: series, refs: [{value: 0, label: "no effect", color: "#6b7280"}],
        x: {type: "time", label: "look (end of day, UTC)"}, y: {label: "difference"}, height: 300, title: c.title
      });
    });
  }
  draw();
  var t = null;
  window.addEventListener("resize", function () { clearTimeout(t); t = setTimeout(draw, 150); });
})();
