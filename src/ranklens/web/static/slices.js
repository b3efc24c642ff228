/* ranklens dashboard: the Slices page. app.js calls window.RLSlicesPage(ctx) with its helpers when the page is
 * /slices; every number comes from the JSON API. */
(function () {
  "use strict";
  var C = window.RLCharts, esc = C.esc, fmt = C.fmt;
  var H = null;  // the helpers of app.js, given when the page starts

  var SERIES = ["model", "model_version", "environment"];
  function sliceName(r) {
    return r.column + "=" + r.value + (r.column2 ? " " + r.column2 + "=" + r.value2 : "") +
      (r.pooled ? " (" + r.n_cells + " below the minimum support)" : "");
  }
  // the Groups page over a row's lists: its window, series and slice values
  function groupsLink(r, s, metric, m) {
    if (r.pooled || r.value === "(missing)" || r.value2 === "(missing)") return "";
    var q = {measure: metric, start: H.dateOnly(m.window_start), end: H.dateOnly(m.window_end)};
    if (s.environment) q.f_environment = s.environment;
    SERIES.forEach(function (k) { if (r[k] !== undefined && r[k] !== null) q["f_" + k] = r[k]; });
    q["f_" + r.column] = r.value;
    if (r.column2) q["f_" + r.column2] = r.value2;
    return "/groups?" + new URLSearchParams(q).toString();
  }
  function pval(v) { return v === null || v === undefined ? "" : v < 1e-4 ? v.toExponential(1) : v.toFixed(4); }
  window.RLSlicesPage = function (x) {
    H = x;
    var info = x.info, $ = x.$, $all = x.$all, api = x.api, fail = x.fail, showError = x.showError,
      readUrl = x.readUrl, writeUrl = x.writeUrl, fill = x.fill, values = x.values, onChange = x.onChange,
      fillChoices = x.fillChoices, models = x.models, versions = x.versions, envs = x.envs,
      setupMeasure = x.setupMeasure, sortableTable = x.sortableTable, signClass = x.signClass, signed = x.signed,
      pct = x.pct, dateOnly = x.dateOnly, addDays = x.addDays, tsMs = x.tsMs, seriesName = x.seriesName;
    var root = $("#slices-controls"), url = readUrl();
    var metricOf = setupMeasure(root, url);
    fillChoices($("select[name=model]", root), models());
    fillChoices($("select[name=model_version]", root), versions());
    fillChoices($("select[name=environment]", root), envs());
    var last = dateOnly(info.last), names = ["start", "end", "window", "model", "model_version", "environment", "depth", "min_support"];
    var dflt = {start: last ? addDays(last, -6) : "", end: last ? addDays(last, 1) : "",
                environment: envs().indexOf("production") >= 0 ? "production" : ""};
    fill(root, Object.assign(dflt, url), names);
    function load() {
      showError(null);
      var s = values(root, names), metric = metricOf();
      writeUrl(Object.assign({measure: metric}, s));
      var q = {measure: metric, start: s.start, end: s.end, environment: s.environment, model: s.model,
               model_version: s.model_version, depth: s.depth, min_support: s.min_support};
      api("/api/slices", q, "slices").then(function (res) {
        var m = res.summary || {}, several = (m.series || []).length > 1;
        H.measureKind($("#slices-measure-kind"), metric, res.label);
        var lines = (m.series || []).map(function (x) {
          return "<li><b>" + esc(seriesName(x.series) || "all groups") + "</b>: " + fmt(x.window_value, 4) + " over " +
            x.n_window + " groups against its baseline " + fmt(x.baseline_value, 4) + " over " + x.n_baseline +
            " groups (" + esc(x.baseline) + "); change <span class='" + signClass(x.change) + "'><b>" + signed(x.change) +
            "</b></span></li>";
        }).concat((m.skipped || []).map(function (x) {
          return "<li><b>" + esc(seriesName(x.series)) + "</b>: left out, " + esc(x.reason) + "</li>";
        }));
        $("#slices-summary").innerHTML = "Window " + esc(dateOnly(m.window_start)) + " to " + esc(dateOnly(m.window_end)) +
          (m.provisional ? " <span class='badge' title='labels not mature: values may still rise'>provisional</span>" : "") +
          ", each series against its own baseline, as the monitors compare it:<ul class='notes'>" + lines.join("") + "</ul>" +
          "<p class='notes'>contribution = rate effect + mix effect; over the values of one column (or the pairs of two) " +
          "of one series the contributions add up to its change. Slices with fewer than " + esc(m.min_support) +
          " groups on either side are pooled into one (other) row. p-values: Welch's test, adjusted by " +
          ({holm: "Holm's method", bh: "Benjamini-Hochberg", none: "nothing"}[m.correction] || m.correction) + " over the " +
          m.n_tested + " slices listed.</p>";
        var rows = res.rows.map(function (r) {
          return Object.assign({}, r, {series: seriesName(r), slice: sliceName(r), link: groupsLink(r, s, metric, m)});
        });
        var f4 = function (v) { return fmt(v, 4); }, sg = function (v) { return signed(v); };
        var cols = (several ? [{key: "series", label: "series"}] : []).concat([
          {key: "slice", label: "slice"},
          {key: "baseline_value", label: "baseline " + metric, num: true, fmt: f4},
          {key: "window_value", label: "window " + metric, num: true, fmt: f4},
          {key: "change", label: "change", num: true, fmt: sg, cls: signClass},
          {key: "n_baseline", label: "groups (baseline)", num: true},
          {key: "n_window", label: "groups (window)", num: true},
          {key: "share_window", label: "share of window", num: true, fmt: pct},
          {key: "rate_effect", label: "rate effect", num: true, fmt: sg},
          {key: "mix_effect", label: "mix effect", num: true, fmt: sg},
          {key: "contribution", label: "contribution", num: true, fmt: sg, cls: signClass},
          {key: "p_value", label: "p-value", num: true, fmt: pval},
          {key: "p_adjusted", label: "adjusted p", num: true, fmt: pval},
          {key: "link", label: "groups", html: function (v) { return v ? "<a class='groups-link' href='" + esc(v) + "'>groups</a>" : ""; }}
        ]);
        sortableTable($("#slices-table"), cols, rows, null);
      }).catch(fail);
      // the heatmap shows the four weeks up to the window's end: the onset of a drop is visible
      var hstart = s.end ? addDays(s.end, -28) : "", first = dateOnly(info.first);
      if (hstart && first && hstart < first) hstart = first;
      $("#heatmap-range").textContent = hstart && s.end ? "(" + hstart + " to " + s.end + ")" : "";
      api("/api/heatmap", Object.assign({window: s.window, limit: 12, history_start: hstart}, q), "heatmap").then(function (hm) {
        var draw = function () {
          C.heatmap($("#slices-heatmap"), {rows: hm.rows, cols: hm.cols.map(tsMs), values: hm.values, counts: hm.counts,
                                           centers: hm.centers, label: metric, title: "slice x time"});
        };
        draw(); H.setRedraws([draw]);
      }).catch(fail);
    }
    onChange(root, load);
    load();
  };
})();
