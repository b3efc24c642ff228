/* ranklens dashboard: one script for the four pages; every number comes from the JSON API (/api/...). */
(function () {
  "use strict";
  var C = window.RLCharts, esc = C.esc, fmt = C.fmt;
  var PAGES = {"/": "overview", "/slices": "slices", "/groups": "groups", "/compare": "compare", "/signals": "signals",
               "/alerts": "alerts"};
  var page = PAGES[location.pathname] || "overview";
  var info = null;
  var redraws = [];

  // -- helpers ------------------------------------------------------------------------------------------
  function $(sel, root) { return (root || document).querySelector(sel); }
  function $all(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  function showError(msg) {
    var box = $("#error");
    if (!msg) { box.hidden = true; box.textContent = ""; return; }
    box.hidden = false; box.textContent = msg;
  }
  var seq = {};
  function api(path, params, slot) {
    var q = new URLSearchParams();
    Object.keys(params || {}).forEach(function (k) {
      var v = params[k];
      if (v !== null && v !== undefined && v !== "") q.append(k, v);
    });
    var url = path + (q.toString() ? "?" + q.toString() : "");
    var n = seq[slot || path] = (seq[slot || path] || 0) + 1;
    return fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}}).then(function (r) {
      return r.json().catch(function () { return {error: "HTTP " + r.status}; }).then(function (body) {
        if (!r.ok) throw new Error((body && body.error) || ("HTTP " + r.status));
        return body;
      });
    }).then(function (body) {
      if (seq[slot || path] !== n) throw {stale: true};  // a newer request of the same slot is on its way
      return body;
    });
  }
  function fail(e) { if (e && e.stale) return; showError(e && e.message ? e.message : String(e)); }
  function dateOnly(iso) { return iso ? String(iso).slice(0, 10) : ""; }
  function addDays(day, n) {
    var d = new Date(day + "T00:00:00Z"); d.setUTCDate(d.getUTCDate() + n); return d.toISOString().slice(0, 10);
  }
  function tsMs(iso) { return Date.parse(/Z$|[+-]\d\d:?\d\d$/.test(iso) ? iso : iso + "Z"); }
  function option(sel, value, label, selected) {
    var o = document.createElement("option");
    o.value = value; o.textContent = label === undefined ? value : label;
    if (selected) o.selected = true;
    sel.appendChild(o);
  }
  function uniq(xs) { return xs.filter(function (x, i) { return xs.indexOf(x) === i; }); }
  function measures() {
    var fam = {};
    (info.tracked || ["ndcg@10"]).forEach(function (m) {
      var at = m.lastIndexOf("@"), f = at > 0 ? m.slice(0, at) : m, k = at > 0 ? m.slice(at + 1) : "";
      (fam[f] = fam[f] || []).push(k);
    });
    Object.keys(fam).forEach(function (f) { fam[f].sort(function (a, b) { return (+a) - (+b); }); });
    return fam;
  }
  // a measure chooser: a family <select> and a k <select> inside `root`
  function setupMeasure(root, state) {
    var fam = measures(), fsel = $("select[name=family]", root), ksel = $("select[name=k]", root);
    var cur = state.measure || state.metric || (info.tracked && info.tracked.indexOf("ndcg@10") >= 0 ? "ndcg@10" : (info.tracked || ["ndcg@10"])[0]);
    var at = cur.lastIndexOf("@"), f0 = at > 0 ? cur.slice(0, at) : cur, k0 = at > 0 ? cur.slice(at + 1) : "";
    Object.keys(fam).forEach(function (f) { option(fsel, f, f, f === f0); });
    function fillK() {
      ksel.innerHTML = "";
      fam[fsel.value].forEach(function (k) { option(ksel, k, k || "-", k === k0); });
      ksel.disabled = fam[fsel.value].length === 1 && fam[fsel.value][0] === "";
    }
    fillK();
    fsel.addEventListener("change", fillK);
    return function () { return fsel.value + (ksel.value ? "@" + ksel.value : ""); };
  }
  function readUrl() {
    var out = {};
    new URLSearchParams(location.search).forEach(function (v, k) { out[k] = v; });
    return out;
  }
  function writeUrl(state) {
    var q = new URLSearchParams();
    Object.keys(state).forEach(function (k) { if (state[k] !== "" && state[k] !== null && state[k] !== undefined) q.set(k, state[k]); });
    history.replaceState(null, "", location.pathname + (q.toString() ? "?" + q.toString() : ""));
  }
  function fill(root, state, names) {
    names.forEach(function (n) {
      var e = $("[name=" + n + "]", root);
      if (e && state[n] !== undefined && state[n] !== null) e.value = state[n];
    });
  }
  function values(root, names) {
    var out = {};
    names.forEach(function (n) { var e = $("[name=" + n + "]", root); if (e) out[n] = e.value; });
    return out;
  }
  function fillChoices(sel, vals, label) {
    vals.forEach(function (v) { option(sel, v, label ? label(v) : v); });
  }
  function models() { return uniq(info.models.map(function (m) { return m.model; })).sort(); }
  function busiest() {
    var by = {};
    info.models.forEach(function (m) { by[m.model] = (by[m.model] || 0) + m.groups; });
    return Object.keys(by).sort(function (a, b) { return by[b] - by[a]; })[0] || "";
  }
  function envs() { return uniq(info.models.map(function (m) { return m.environment; })).sort(); }
  function versions() { return uniq(info.models.map(function (m) { return m.model_version; })).sort(); }
  function versionKeys() { return uniq(info.models.map(function (m) { return m.model + "\u0000" + m.model_version; })).sort(); }
  function seriesName(r) {
    return [r.model, r.model_version, r.environment].filter(function (x) { return x !== undefined && x !== null; }).join(" \u00b7 ");
  }
  function describeBaseline(spec) {
    if (!spec) return "as configured";
    var w = Object.keys(spec.where || {}).filter(function (k) { return k !== "environment"; })
      .map(function (k) { return k + "=" + spec.where[k]; }).join(", ");
    var what = spec.kind === "environment" ? "the " + spec.environment + " environment"
      : spec.kind === "range" ? dateOnly(spec.start) + " to " + dateOnly(spec.end) : spec.kind;
    return what + (w ? " of " + w : "");
  }
  // what a measure is, from the `label` of the API's answer: naive or debiased and, for a debiased one, where its
  // propensities come from (monitor.propensity.measure_label); every page showing a chosen measure writes it
  function measureKind(el, metric, lab) {
    lab = lab || {};
    el.textContent = lab.kind ? metric + " is " + lab.label + (lab.source ? "; " + lab.source : "") + "." : "";
  }
  function kpi(label, value, detail, cls) {
    return "<div class='kpi " + (cls || "") + "'><div class='label'>" + esc(label) + "</div><div class='value'>" +
      esc(value) + "</div><div class='detail'>" + (detail || "") + "</div></div>";
  }
  function signed(v, d) { return v === null || v === undefined || !isFinite(v) ? "n/a" : (v > 0 ? "+" : "") + v.toFixed(d || 4); }
  function pct(v) { return v === null || v === undefined || !isFinite(v) ? "n/a" : (100 * v).toFixed(1) + "%"; }
  function defaultRange() {
    var first = dateOnly(info.first), last = dateOnly(info.last);
    return {start: first, end: last ? addDays(last, 1) : ""};
  }
  function onChange(root, fn) {
    $all("select, input", root).forEach(function (e) {
      e.addEventListener(e.tagName === "INPUT" && e.type === "search" ? "search" : "change", fn);
    });
  }

  // a table whose headers sort it; cols: [{key, label, num, fmt, cls}]
  function sortableTable(container, cols, rows, initial) {
    var state = {key: initial ? initial.key : null, dir: initial ? initial.dir : 1};
    function render() {
      var data = rows.slice();
      if (state.key) {
        data.sort(function (a, b) {
          var x = a[state.key], y = b[state.key];
          if (x === null || x === undefined) return 1;
          if (y === null || y === undefined) return -1;
          return (x < y ? -1 : x > y ? 1 : 0) * state.dir;
        });
      }
      var h = "<table class='rl'><thead><tr>" + cols.map(function (c) {
        var cls = "sortable" + (c.num ? "" : " l") + (state.key === c.key ? (state.dir > 0 ? " sorted-asc" : " sorted-desc") : "");
        return "<th class='" + cls + "' data-key='" + esc(c.key) + "'>" + esc(c.label) + "</th>";
      }).join("") + "</tr></thead><tbody>";
      data.forEach(function (r) {
        h += "<tr>" + cols.map(function (c) {
          var v = r[c.key], cls = (c.num ? "" : "l") + (c.wrap ? " wrap" : "") + (c.cls ? " " + c.cls(v, r) : "");
          return "<td class='" + cls + "'>" + (c.html ? c.html(v, r) : esc(c.fmt ? c.fmt(v, r) : (v === null || v === undefined ? "" : v))) + "</td>";
        }).join("") + "</tr>";
      });
      h += "</tbody></table>";
      container.innerHTML = data.length ? h : "<div class='rl-empty small'>Nothing in this selection.</div>";
      $all("th", container).forEach(function (th) {
        th.addEventListener("click", function () {
          var k = th.getAttribute("data-key");
          state.dir = state.key === k ? -state.dir : 1; state.key = k; render();
        });
      });
    }
    render();
  }
  var signClass = function (v) { return v > 0 ? "pos" : v < 0 ? "neg" : ""; };

  // -- Overview -------------------------------------------------------------------------------------------
  function overview() {
    var root = $("#overview-controls"), url = readUrl();
    var metricOf = setupMeasure(root, url);
    fillChoices($("select[name=model]", root), models());
    fillChoices($("select[name=environment]", root), envs());
    fillChoices($("select[name=model_version]", root), versions());
    var r0 = defaultRange();
    var names = ["window", "start", "end", "model", "environment", "model_version", "ci"];
    fill(root, Object.assign({start: r0.start, end: r0.end, model: busiest()}, url), names);
    function load() {
      showError(null);
      var s = values(root, names), metric = metricOf();
      writeUrl(Object.assign({measure: metric}, s));
      var filters = {model: s.model, environment: s.environment, model_version: s.model_version};
      var q = Object.assign({measure: metric, window: s.window, start: s.start, end: s.end, ci: s.ci}, filters);
      $("#overview-title").textContent = metric + " per " + s.window;
      Promise.all([
        api("/api/report", q, "overview-report"),
        api("/api/baselines", Object.assign({measure: metric, start: s.start, end: s.end}, filters), "overview-baseline").catch(function (e) { if (e && e.stale) throw e; return null; }),
        api("/api/alerts", {start: s.start, end: s.end, measure: metric}, "overview-alerts")
      ]).then(function (res) {
        var rep = res[0];
        measureKind($("#overview-measure-kind"), metric, rep.label);
        var bases = res[1] ? res[1].rows : [], alerts = res[2].rows.filter(function (a) {
          return (!s.model || !a.model || a.model === s.model) && (!s.environment || a.environment === s.environment) &&
                 (!s.model_version || a.model_version === s.model_version);
        });
        var groups = {};
        rep.rows.forEach(function (r) {
          var key = seriesName(r);
          (groups[key] = groups[key] || []).push({x: tsMs(r.window), y: r.value, lo: r.ci_low, hi: r.ci_high, n: r.n_groups,
                                                   provisional: !!r.provisional});
        });
        // a model version keeps its colour whatever the filters (its place among the store's versions); its
        // training series is dashed, and each series' own baseline (the monitors' rule) a dotted line
        var colourOf = function (r) {
          var i = versionKeys().indexOf(r.model + "\u0000" + r.model_version);
          return i >= 0 ? C.palette[i % C.palette.length] : undefined;
        };
        var meta = {};
        rep.rows.forEach(function (r) { meta[seriesName(r)] = r; });
        var series = Object.keys(groups).sort().map(function (k) {
          return {name: k, points: groups[k].sort(function (a, b) { return a.x - b.x; }), color: colourOf(meta[k]),
                  dash: meta[k].environment === "training"};
        });
        var baseOf = {};
        bases.forEach(function (b) { baseOf[seriesName(b)] = b; });
        var refs = bases.filter(function (b) { return !b.own && b.value !== null && groups[seriesName(b)]; })
          .map(function (b) { return {value: b.value, color: colourOf(b), label: "baseline of " + seriesName(b)}; });
        var band = null;
        var markers = alerts.map(function (a) {
          return {x: tsMs(a.window || a.window_start),
                  label: "alert " + (a.monitor || "") + ": " + [a.model, a.model_version, a.environment].filter(Boolean).join(" ") +
                         " " + fmt(a.value, 4) + " vs baseline " + fmt(a.baseline, 4) + (a.reason ? " (" + a.reason + ")" : "")};
        });
        var draw = function () {
          C.line($("#overview-chart"), {series: series, band: band, refs: refs, markers: markers, markerLabel: "fired alert",
            x: {type: "time", label: "window start (UTC)"}, y: {label: metric}, height: 360,
            title: metric + " over time"});
        };
        draw(); redraws = [draw];
        $("#overview-note").textContent = (s.ci === "none" ? "" : "Shaded: " + (s.ci === "t" ? "t" : "bootstrap") +
          " 95% interval of each window's mean over groups. ") +
          (refs.length ? "Dotted lines: each series' own baseline, as the monitors compare it (" +
           bases.filter(function (b) { return !b.own && groups[seriesName(b)]; }).map(function (b) {
             return seriesName(b) + ": " + b.baseline + ", " + b.n_groups + " groups"; }).join("; ") + "). " : "") +
          "Dashed: the training environment. Grey, hollow and hatched: provisional windows (labels not mature: " +
          "never alerted on). Red markers: fired alerts. Hover the chart for values.";
        // KPIs: latest window of each production series (or of every series)
        var prod = series.filter(function (x) { return /production/.test(x.name); });
        var latest = (prod.length ? prod : series).map(function (x) {  // the latest mature window (labels all in)
          var mature = x.points.filter(function (p) { return !p.provisional; });
          return {name: x.name, p: (mature.length ? mature : x.points)[(mature.length ? mature : x.points).length - 1],
                  later: x.points.length - mature.length};
        });
        var html = "";
        latest.slice(0, 4).forEach(function (l) {
          var b = baseOf[l.name], ok = b && !b.own && b.value !== null, ch = ok ? l.p.y - b.value : null;
          html += kpi("latest " + l.name, fmt(l.p.y, 4), esc(dateOnly(new Date(l.p.x).toISOString())) + " \u00b7 n=" + l.p.n +
                      (l.later ? " \u00b7 <span class='rl-muted'>" + l.later + " provisional after</span>" : "") +
                      (ch !== null ? " \u00b7 <span class='" + signClass(ch) + "'>" + signed(ch) + " vs its baseline " + fmt(b.value, 4) + "</span>" : ""),
                      ch !== null && isFinite(b.ci_low) && l.p.y < b.ci_low ? "bad" : "");
        });
        html += kpi("alerts fired", String(alerts.length), "in the time range", alerts.length ? "bad" : "good");
        $("#overview-kpis").innerHTML = html;
        var cols = [  // the window is what an alert names (not the time check ran)
          {key: "window", label: "window", fmt: function (v) { return String(v || "").slice(0, 16).replace("T", " "); }},
          {key: "state", label: "alert", html: function (v, r) {
            return r.alert_id === null || r.alert_id === undefined ? esc(v || "") :
              "<a href='/alerts#alert-" + esc(r.alert_id) + "'>#" + esc(r.alert_id) + " " + esc(v || "") + "</a>"; }},
          {key: "monitor", label: "monitor"}, {key: "metric", label: "metric"},
          {key: "model_version", label: "version"}, {key: "environment", label: "environment"},
          {key: "value", label: "value", num: true, fmt: function (v) { return fmt(v, 4); }},
          {key: "baseline", label: "baseline", num: true, fmt: function (v) { return fmt(v, 4); }},
          {key: "threshold", label: "threshold", num: true, fmt: function (v) { return fmt(v, 4); }},
          {key: "reason", label: "reason", wrap: true}
        ];
        sortableTable($("#alerts-table"), cols, alerts, {key: "window", dir: -1});
      }).catch(fail);
    }
    onChange(root, load);
    load();
  }

  // -- Compare --------------------------------------------------------------------------------------------
  function compare() {
    var root = $("#compare-controls"), url = readUrl();
    var metricOf = setupMeasure(root, url);
    $all(".side").forEach(function (side) {
      var p = side.getAttribute("data-side") + "_";
      fillChoices($("select[name=" + p + "model]", side), models());
      fillChoices($("select[name=" + p + "model_version]", side), versions());
      fillChoices($("select[name=" + p + "environment]", side), envs());
    });
    // default: the two versions of the busiest model in production; one version: first half vs second half
    var main = busiest();
    var vs = uniq(info.models.filter(function (m) { return m.model === main; }).map(function (m) { return m.model_version; })).sort();
    var env = envs().indexOf("production") >= 0 ? "production" : "";
    var r0 = defaultRange(), d = {};
    if (vs.length >= 2) {
      // the same period for both: the days both versions were served (in production when there is one)
      var span = function (v) {
        var ms = info.models.filter(function (m) { return m.model === main && m.model_version === v && (!env || m.environment === env); });
        return {first: ms.map(function (m) { return dateOnly(m.first); }).sort()[0] || "",
                last: ms.map(function (m) { return dateOnly(m.last); }).sort().pop() || ""};
      };
      var sa = span(vs[vs.length - 1]), sb = span(vs[vs.length - 2]);
      var from = sa.first > sb.first ? sa.first : sb.first, to = sa.last < sb.last ? sa.last : sb.last;
      d = {a_model_version: vs[vs.length - 1], b_model_version: vs[vs.length - 2], a_environment: env, b_environment: env};
      if (from && to && from <= to) {
        d.a_start = d.b_start = from; d.a_end = d.b_end = addDays(to, 1);
      }
    } else {
      var mid = addDays(r0.start, Math.floor((Date.parse(r0.end) - Date.parse(r0.start)) / 86400000 / 2));
      d = {a_start: mid, a_end: r0.end, b_start: r0.start, b_end: mid, a_environment: env, b_environment: env};
    }
    d.a_model = d.b_model = main;
    var names = ["confidence", "a_model", "b_model", "a_model_version", "a_environment", "a_start", "a_end", "b_model_version", "b_environment", "b_start", "b_end"];
    fill(document, Object.assign(d, url), names);
    function label(s, p) {
      var parts = [s[p + "model"], s[p + "model_version"], s[p + "environment"]].filter(Boolean);
      if (s[p + "start"] || s[p + "end"]) parts.push((s[p + "start"] || "\u2026") + " to " + (s[p + "end"] || "\u2026"));
      return p.toUpperCase()[0] + (parts.length ? ": " + parts.join(" \u00b7 ") : ": everything");
    }
    function load() {
      showError(null);
      var s = values(document, names), metric = metricOf();
      writeUrl(Object.assign({measure: metric}, s));
      api("/api/compare", Object.assign({measure: metric}, s), "compare").then(function (c) {
        var la = label(s, "a_"), lb = label(s, "b_"), conf = Math.round(100 * (+s.confidence)) + "%";
        var sig = c.p_value !== null && c.p_value < 1 - (+s.confidence);
        $("#compare-title").textContent = metric + ": " + la + "  vs  " + lb;
        measureKind($("#compare-measure-kind"), metric, c.label);
        $("#compare-kpis").innerHTML =
          kpi("A " + metric, fmt(c.a.value, 4), "[" + fmt(c.a.ci_low, 4) + ", " + fmt(c.a.ci_high, 4) + "] \u00b7 n=" + c.a.n_groups) +
          kpi("B " + metric, fmt(c.b.value, 4), "[" + fmt(c.b.ci_low, 4) + ", " + fmt(c.b.ci_high, 4) + "] \u00b7 n=" + c.b.n_groups) +
          kpi("difference A \u2212 B", signed(c.difference), conf + " CI [" + fmt(c.ci_low, 4) + ", " + fmt(c.ci_high, 4) + "]",
              sig ? (c.difference < 0 ? "bad" : "good") : "") +
          kpi("p-value", c.p_value === null ? "n/a" : (c.p_value < 1e-4 ? c.p_value.toExponential(1) : c.p_value.toFixed(4)),
              esc(c.test || ""));
        $("#compare-verdict").innerHTML = sig
          ? "<span class='badge " + (c.difference < 0 ? "bad" : "good") + "'>significant</span> A is " +
            (c.difference < 0 ? "worse" : "better") + " than B by " + fmt(Math.abs(c.difference), 4) + " (p " +
            (c.p_value < 1e-4 ? "< 0.0001" : "= " + c.p_value.toFixed(4)) + ")"
          : "<span class='badge neutral'>not significant</span> at the " + conf + " level (p = " + fmt(c.p_value, 4) + ")";
        var draw = function () {
          C.forest($("#compare-means"), {rows: [
            {label: "A", value: c.a.value, lo: c.a.ci_low, hi: c.a.ci_high, color: "#2563eb", note: "n=" + c.a.n_groups},
            {label: "B", value: c.b.value, lo: c.b.ci_low, hi: c.b.ci_high, color: "#d97706", note: "n=" + c.b.n_groups}],
            zero: null, x: {label: metric + " (" + conf + " interval)"}});
          C.forest($("#compare-diff"), {rows: [
            {label: "A \u2212 B", value: c.difference, lo: c.ci_low, hi: c.ci_high, filled: sig,
             color: sig ? (c.difference < 0 ? "#dc2626" : "#059669") : "#4b5563"}],
            zero: 0, x: {label: "difference of " + metric + " (" + conf + " interval; filled = significant)"}});
        };
        draw(); redraws = [draw];
        var same = (s.a_start || "") === (s.b_start || "") && (s.a_end || "") === (s.b_end || "");
        $("#compare-warning").hidden = same;
        $("#compare-warning").textContent = same ? "" : "A and B cover different periods: a difference may come from the " +
          "period (traffic, season, late labels) as well as from the model.";
        $("#compare-note").textContent = la + ";  " + lb + ".  " + (c.test === "welch"
          ? "The two sides are different groups: Welch's unequal-variance t-test (two-sided); the interval of the " +
            "difference is a bootstrap over each side's groups." : "Test: " + (c.test || "") + ".");
      }).catch(fail);
    }
    onChange(document.querySelector("#page-compare"), load);
    load();
  }

  // -- start ----------------------------------------------------------------------------------------------
  function start() {
    $all("header nav a").forEach(function (a) { if (a.getAttribute("data-page") === page) a.classList.add("active"); });
    $("#page-" + page).hidden = false;
    api("/api/info", {}).then(function (i) {
      info = i;
      info.models = info.models || [];
      $("#store-label").textContent = String(i.path || "").split("/").pop() + " \u00b7 " + (i.groups || 0).toLocaleString("en") +
        " groups \u00b7 " + dateOnly(i.first) + " \u2192 " + dateOnly(i.last);
      // the Signals page lives in signals.js and gets the helpers it needs
      var signals = function () {
        window.RLSignalsPage({api: api, info: info, fail: fail, showError: showError, $: $, readUrl: readUrl,
          writeUrl: writeUrl, fill: fill, values: values, onChange: onChange, fillChoices: fillChoices, models: models,
          envs: envs, versions: versions, busiest: busiest, sortableTable: sortableTable, tsMs: tsMs,
          dateOnly: dateOnly, defaultRange: defaultRange, seriesName: seriesName, kpi: kpi,
          setRedraws: function (fs) { redraws = fs; }});
      };
      // the Alerts page lives in alerts.js
      var alerts = function () {
        window.RLAlertsPage({api: api, info: info, fail: fail, showError: showError, $: $, readUrl: readUrl,
          writeUrl: writeUrl, fill: fill, values: values, onChange: onChange, dateOnly: dateOnly, addDays: addDays,
          defaultRange: defaultRange, seriesName: seriesName, kpi: kpi});
      };
      // the Slices and Groups pages live in slices.js and groups.js
      var ctx = {api: api, info: info, fail: fail, showError: showError, $: $, $all: $all, readUrl: readUrl,
        writeUrl: writeUrl, fill: fill, values: values, onChange: onChange, fillChoices: fillChoices, models: models,
        versions: versions, envs: envs, setupMeasure: setupMeasure, sortableTable: sortableTable, signClass: signClass,
        signed: signed, pct: pct, dateOnly: dateOnly, addDays: addDays, tsMs: tsMs, seriesName: seriesName,
        measureKind: measureKind, setRedraws: function (fs) { redraws = fs; }};
      var slices = function () { window.RLSlicesPage(ctx); };
      var groups = function () { window.RLGroupsPage(ctx); };
      ({overview: overview, slices: slices, groups: groups, compare: compare, signals: signals, alerts: alerts})[page]();
    }).catch(fail);
    var t = null;
    window.addEventListener("resize", function () {
      clearTimeout(t); t = setTimeout(function () { redraws.forEach(function (f) { f(); }); }, 150);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start); else start();
})();
