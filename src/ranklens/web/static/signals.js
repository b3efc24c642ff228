/* ranklens dashboard: the Signals page (label-free signals per window and series, from /api/signals).
 * app.js calls window.RLSignalsPage(ctx) with its helpers when the page is /signals. */
(function () {
  "use strict";
  var C = window.RLCharts, esc = C.esc, fmt = C.fmt;
  var PSI_BAND = {value: 0.1, lo: 0.1, hi: 0.25, label: "PSI 0.1\u20130.25: noticeable shift (above: major)"};

  function isDistance(name) { return /^(psi|ks)\(/.test(name); }
  function worseUp(name) { return isDistance(name) || /^gini/.test(name); }

  window.RLSignalsPage = function (x) {
    var $ = x.$, root = $("#signals-controls"), url = x.readUrl();
    var names = ["signal", "window", "start", "end", "model", "environment", "model_version"];
    x.fillChoices($("select[name=model]", root), x.models());
    x.fillChoices($("select[name=environment]", root), x.envs());
    x.fillChoices($("select[name=model_version]", root), x.versions());
    var r0 = x.defaultRange();
    var dflt = {start: r0.start, end: r0.end, model: x.busiest(),
                environment: x.envs().indexOf("production") >= 0 ? "production" : "", signal: url.signal || url.metric || "psi(score)"};
    var msel = $("select[name=signal]", root);
    var filled = false;

    function load() {
      x.showError(null);
      var s = x.values(root, names);
      if (!filled) s.signal = dflt.signal;
      x.writeUrl(s);
      var q = {window: s.window, start: s.start, end: s.end, model: s.model, environment: s.environment,
               model_version: s.model_version};
      var metric = filled ? msel.value : s.signal;
      // every signal of the store (the table), and the chosen one (the chart: it may have a cutoff, e.g. gini@10)
      Promise.all([x.api("/api/signals", q, "signals"),
                   x.api("/api/signals", Object.assign({signal: metric}, q), "signals-one"),
                   x.api("/api/alerts", {start: s.start, end: s.end}, "signals-alerts")])
        .then(function (res) {
          var data = res[0], alerts = res[2].rows;
          if (!filled) {  // the chooser: what the store can compute (ild needs item attributes), and top-10 variants
            msel.innerHTML = "";
            var names = data.signals.slice();
            ["psi(popularity@10)", "coverage@10", "gini@10", "novelty@10"].concat(
              data.signals.indexOf("ild") >= 0 ? ["ild@10"] : []).concat([metric]).forEach(function (n) {
              if (names.indexOf(n) < 0) names.push(n);
            });
            names.forEach(function (n) {
              var o = document.createElement("option"); o.value = n; o.textContent = n;
              if (n === metric) o.selected = true;
              msel.appendChild(o);
            });
            filled = true;
          }
          $("#signals-title").textContent = metric + " per " + s.window + " against the baseline (" + data.baseline + ")";
          var rows = res[1].rows;
          var groups = {}, bases = {};
          rows.forEach(function (r) {
            var key = x.seriesName(r);
            (groups[key] = groups[key] || []).push({x: x.tsMs(r.window), y: r.value, n: r.n_groups});
            if (r.baseline !== null) bases[key] = r.baseline;
          });
          var all = x.info.models.map(x.seriesName);
          var series = Object.keys(groups).sort().map(function (k) {
            var i = all.indexOf(k);
            return {name: k, points: groups[k].filter(function (p) { return p.y !== null; }).sort(function (a, b) { return a.x - b.x; }),
                    color: i >= 0 ? C.palette[i % C.palette.length] : undefined};
          });
          var band = null, bkeys = Object.keys(bases);
          if (/^psi\(/.test(metric)) band = PSI_BAND;
          else if (bkeys.length) band = {value: bases[bkeys[0]], lo: bases[bkeys[0]], hi: bases[bkeys[0]],
                                         label: "baseline of " + bkeys[0]};
          var fired = alerts.filter(function (a) {
            return a.metric === metric && (!s.environment || a.environment === s.environment) &&
                   (!s.model_version || a.model_version === s.model_version) && (!s.model || !a.model || a.model === s.model);
          });
          var markers = fired.map(function (a) {
            return {x: x.tsMs(a.window_start || a.window), label: "alert " + (a.monitor || "") + ": " + (a.reason || "")};
          });
          var draw = function () {
            C.line($("#signals-chart"), {series: series, band: band, markers: markers, markerLabel: "fired alert",
              x: {type: "time", label: "window start (UTC)"}, y: {label: metric}, height: 340,
              title: metric + " over time", emptyMessage: "No served lists in this selection."});
          };
          draw(); x.setRedraws([draw]);
          $("#signals-note").textContent = "Each point: one window of one series against its baseline (" + data.baseline +
            "). " + (worseUp(metric) ? "Higher is worse. " : "Lower is worse. ") +
            (band === PSI_BAND ? "Shaded: the usual PSI bands. " : band ? "Grey line: the baseline's own value. " : "") +
            "Red markers: fired alerts of monitors on this signal. No labels are needed: a window shows as soon as its lists are served.";
          // KPIs: the last window of each series for the chosen signal
          var html = "";
          series.slice(0, 3).forEach(function (sr) {
            var p = sr.points[sr.points.length - 1];
            if (!p) return;
            var bad = band === PSI_BAND ? p.y >= 0.25 : false;
            html += x.kpi("latest " + sr.name, fmt(p.y, 4), esc(x.dateOnly(new Date(p.x).toISOString())) + " \u00b7 " + p.n + " lists" +
                          (bases[sr.name] !== undefined ? " \u00b7 baseline " + fmt(bases[sr.name], 4) : ""), bad ? "bad" : "");
          });
          html += x.kpi("signal alerts", String(fired.length), "of " + metric + " in the time range", fired.length ? "bad" : "good");
          $("#signals-kpis").innerHTML = html;
          // every signal of the last window
          var last = data.rows.reduce(function (m, r) { return r.window > m ? r.window : m; }, "");
          var lastRows = data.rows.filter(function (r) { return r.window === last; }).map(function (r) {
            return Object.assign({series: x.seriesName(r)}, r);
          });
          $("#signals-last-hint").textContent = last ? "window " + String(last).slice(0, 16).replace("T", " ") + "; red: PSI above 0.25, KS p below 0.01" : "";
          var cols = [
            {key: "series", label: "series"}, {key: "signal", label: "signal"},
            {key: "value", label: "value", num: true, fmt: function (v) { return fmt(v, 4); },
             cls: function (v, r) { return (/^psi/.test(r.signal) && v >= 0.25) || (r.signal === "ks(score)" && r.p_value !== null && r.p_value < 0.01) ? "neg" : ""; }},
            {key: "baseline", label: "baseline", num: true, fmt: function (v) { return v === null ? "" : fmt(v, 4); }},
            {key: "p_value", label: "p-value", num: true, fmt: function (v) { return v === null ? "" : (v < 1e-4 ? "< 0.0001" : fmt(v, 4)); }},
            {key: "n_groups", label: "lists", num: true}, {key: "n", label: "counted", num: true},
            {key: "n_baseline", label: "baseline counted", num: true}, {key: "n_excluded", label: "left out", num: true}
          ];
          x.sortableTable($("#signals-table"), cols, lastRows, null);
          $("#signals-defs").innerHTML = Object.keys(data.definitions).map(function (f) {
            return "<b>" + esc(f) + "</b>: " + esc(data.definitions[f]);
          }).join("<br>");
        }).catch(x.fail);
    }
    x.fill(root, Object.assign(dflt, url), names.filter(function (n) { return n !== "signal"; }));
    x.onChange(root, load);
    load();
  };
})();
