/* ranklens charts: small SVG charts drawn in the browser, no dependency, no network.
 * Used by the dashboard and inlined into the offline HTML report.
 *   RLCharts.line(el, opts)     metric over time or over k; interval bands, a baseline band, event markers
 *   RLCharts.heatmap(el, opts)  rows x columns of values (slice x time)
 *   RLCharts.forest(el, opts)   estimates with intervals (interval plot)
 *   RLCharts.bars(el, opts)     sorted values, coloured by sign (per-query differences)
 * Every chart replaces the content of `el`, sets el.dataset.signature to a digest of its data, and has
 * a hover tooltip. Licence: BSD-3-Clause, as ranklens.
 */
(function (global) {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  // Series colours: no red and no green, which mean "alert / worse" and "better" everywhere in ranklens.
  var PALETTE = ["#2563eb", "#d97706", "#7c3aed", "#0891b2", "#4b5563", "#a16207", "#0f766e", "#9333ea",
                 "#1e3a8a", "#c2410c"];
  var ALERT = "#dc2626";
  var PROVISIONAL = "#9ca3af";  // windows whose labels are not mature

  function el(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) if (attrs[k] !== undefined && attrs[k] !== null) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, attrs) {
    var t = el("text", Object.assign({x: x, y: y}, attrs || {}), parent);
    t.textContent = s;
    return t;
  }
  function fmt(v, d) {
    if (v === null || v === undefined || (typeof v === "number" && !isFinite(v))) return "n/a";
    if (typeof v !== "number") return String(v);
    return v.toFixed(d === undefined ? 4 : d);
  }
  function fmtTick(v, step) {
    var d = 0;  // as many decimals as the step needs (0.025 -> 3)
    while (d < 6 && Math.abs(Math.round(step * Math.pow(10, d)) - step * Math.pow(10, d)) > 1e-6) d++;
    return v.toFixed(d);
  }
  function niceTicks(lo, hi, n) {
    if (!(hi > lo)) { hi = lo + 1; lo = lo - 1; }
    var raw = (hi - lo) / Math.max(1, n), mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var steps = [1, 2, 2.5, 5, 10], step = mag;
    for (var i = 0; i < steps.length; i++) { if (steps[i] * mag >= raw) { step = steps[i] * mag; break; } }
    // outer ticks: the first at or below lo, the last at or above hi (the axis spans them)
    var out = [], start = Math.floor(lo / step + 1e-9) * step, stop = Math.ceil(hi / step - 1e-9) * step;
    for (var i2 = 0, v = start; v <= stop + step * 1e-9 && i2 < 100; i2++, v = start + i2 * step) {
      out.push(Math.abs(v) < step * 1e-9 ? 0 : v);
    }
    return {ticks: out, step: step};
  }
  var MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function fmtTime(ms, withTime) {
    var d = new Date(ms), s = MONTHS[d.getUTCMonth()] + " " + pad(d.getUTCDate());
    if (withTime) s += " " + pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes());
    return s;
  }
  function fmtTimeFull(ms) {
    var d = new Date(ms);
    return d.getUTCFullYear() + "-" + pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) +
      (d.getUTCHours() || d.getUTCMinutes() ? " " + pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) : "") + " UTC";
  }
  function timeTicks(lo, hi, maxTicks) {
    var DAY = 86400000, HOUR = 3600000, span = hi - lo;
    var choices = [HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY, 91 * DAY];
    var step = choices[choices.length - 1];
    for (var i = 0; i < choices.length; i++) if (span / choices[i] <= maxTicks) { step = choices[i]; break; }
    var out = [], start = Math.ceil(lo / step) * step;
    for (var t = start; t <= hi; t += step) out.push(t);
    return {ticks: out, step: step, withTime: step < DAY};
  }
  function signature(obj) {
    var s = JSON.stringify(obj), h = 2166136261;
    for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
    return (h >>> 0).toString(16) + "-" + s.length;
  }
  function clear(container) {
    while (container.firstChild) container.removeChild(container.firstChild);
    container.classList.add("rl-chart");
  }
  function tooltip(container) {
    var tip = document.createElement("div");
    tip.className = "rl-tip";
    tip.style.display = "none";
    container.appendChild(tip);
    return {
      show: function (html, x, y) {
        tip.innerHTML = html;
        tip.style.display = "block";
        var w = container.clientWidth, tw = tip.offsetWidth;
        tip.style.left = Math.max(0, Math.min(x + 14, w - tw - 4)) + "px";
        tip.style.top = Math.max(0, y - 10) + "px";
      },
      hide: function () { tip.style.display = "none"; }
    };
  }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  function legend(container, items) {
    var div = document.createElement("div");
    div.className = "rl-legend";
    items.forEach(function (it) {
      var span = document.createElement("span");
      span.className = "rl-legend-item";
      var sw = document.createElement("span");
      sw.className = "rl-swatch" + (it.kind ? " rl-swatch-" + it.kind : "");
      sw.style.background = it.kind === "line" ? "transparent" : it.color;
      sw.style.borderColor = it.color;
      span.appendChild(sw);
      span.appendChild(document.createTextNode(it.label));
      div.appendChild(span);
    });
    container.appendChild(div);
  }
  function empty(container, message, height) {
    var div = document.createElement("div");
    div.className = "rl-empty";
    div.style.height = (height || 200) + "px";
    div.textContent = message || "No data for this selection.";
    container.appendChild(div);
    container.dataset.signature = "empty";
  }
  function svgRoot(container, width, height, label) {
    var svg = el("svg", {width: width, height: height, viewBox: "0 0 " + width + " " + height, role: "img",
                         "aria-label": label || "chart", "class": "rl-svg"});
    container.appendChild(svg);
    return svg;
  }
  function yAxis(svg, m, W, H, y, t, label) {
    var g = el("g", {"class": "rl-axis"}, svg);
    t.ticks.forEach(function (v) {
      var py = y(v);
      el("line", {x1: m.l, x2: W - m.r, y1: py, y2: py, "class": "rl-grid"}, g);
      text(g, m.l - 6, py + 4, fmtTick(v, t.step), {"text-anchor": "end"});
    });
    if (label) text(g, 14, m.t + (H - m.t - m.b) / 2, label,
                    {"text-anchor": "middle", transform: "rotate(-90 14 " + (m.t + (H - m.t - m.b) / 2) + ")",
                     "class": "rl-axis-label"});
  }

  /* Line chart.
   * opts.series: [{name, color, points: [{x, y, lo, hi, n}]}]; x: number (ms for time) ; y may be null
   * opts.x: {type: "time" | "linear" | "log", label}; opts.y: {label, min, max}
   * opts.band: {value, lo, hi, label}: a horizontal band (the baseline)
   * opts.markers: [{x, label, color}]: vertical markers (fired alerts)
   * opts.refs: [{value, color, label}]: horizontal reference lines (each series' own baseline)
   * a series with dash: true is drawn dashed (the training environment)
   * a point with provisional: true (labels not mature yet) is drawn hollow, joined by a grey dashed line, over a
   * grey hatched area, with a legend entry
   */
  function line(container, opts) {
    clear(container);
    var series = (opts.series || []).filter(function (s) { return s.points && s.points.length; });
    var H = opts.height || 320;
    container.dataset.signature = signature([opts.series, opts.band, opts.markers, opts.refs]);
    if (!series.length) { empty(container, opts.emptyMessage, H); return; }
    series.forEach(function (s, i) { s.color = s.color || PALETTE[i % PALETTE.length]; });
    var items = series.map(function (s) { return {label: s.name, color: s.color, kind: s.dash ? "dash" : undefined}; });
    if (opts.band && isFinite(opts.band.value)) items.push({label: opts.band.label || "baseline", color: "#6b7280", kind: "band"});
    (opts.refs || []).forEach(function (r) { if (isFinite(r.value)) items.push({label: r.label, color: r.color, kind: "ref"}); });
    if (opts.markers && opts.markers.length) items.push({label: opts.markerLabel || "alert", color: ALERT, kind: "line"});
    var provisional = [];
    series.forEach(function (s) { s.points.forEach(function (p) { if (p.provisional) provisional.push(p.x); }); });
    if (provisional.length) items.push({label: "provisional: labels not mature", color: PROVISIONAL, kind: "dash"});
    if (opts.legend !== false) legend(container, items);
    var W = Math.max(320, container.clientWidth || 800);
    var m = {l: 64, r: 18, t: 14, b: 46};
    var xType = (opts.x && opts.x.type) || "linear";
    var xs = [], ys = [];
    series.forEach(function (s) {
      s.points.forEach(function (p) {
        xs.push(p.x);
        [p.y, p.lo, p.hi].forEach(function (v) { if (v !== null && v !== undefined && isFinite(v)) ys.push(v); });
      });
    });
    (opts.markers || []).forEach(function (mk) { xs.push(mk.x); });
    if (opts.band) [opts.band.value, opts.band.lo, opts.band.hi].forEach(function (v) { if (isFinite(v)) ys.push(v); });
    (opts.refs || []).forEach(function (r) { if (r.value !== null && isFinite(r.value)) ys.push(r.value); });
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    if (x0 === x1) { var d = xType === "time" ? 43200000 : 1; x0 -= d; x1 += d; }
    var y0 = opts.y && isFinite(opts.y.min) ? opts.y.min : Math.min.apply(null, ys);
    var y1 = opts.y && isFinite(opts.y.max) ? opts.y.max : Math.max.apply(null, ys);
    var padY = (y1 - y0) * 0.03 || 0.05; y0 -= padY; y1 += padY;
    var yt = niceTicks(y0, y1, 5);
    y0 = Math.min(y0, yt.ticks[0]); y1 = Math.max(y1, yt.ticks[yt.ticks.length - 1]);
    var lg = function (v) { return Math.log(v); };
    var x = xType === "log"
      ? function (v) { return m.l + (lg(v) - lg(x0)) / (lg(x1) - lg(x0)) * (W - m.l - m.r); }
      : function (v) { return m.l + (v - x0) / (x1 - x0) * (W - m.l - m.r); };
    var y = function (v) { return H - m.b - (v - y0) / (y1 - y0) * (H - m.t - m.b); };
    var svg = svgRoot(container, W, H, opts.title);
    yAxis(svg, m, W, H, y, yt, opts.y && opts.y.label);
    var gx = el("g", {"class": "rl-axis"}, svg);
    el("line", {x1: m.l, x2: W - m.r, y1: H - m.b, y2: H - m.b, "class": "rl-baseline-axis"}, gx);
    var xticks;
    if (xType === "time") {
      var tt = timeTicks(x0, x1, Math.max(2, Math.floor((W - m.l - m.r) / 80)));
      xticks = tt.ticks.map(function (v) { return {v: v, s: fmtTime(v, tt.withTime)}; });
    } else if (xType === "log") {
      xticks = [1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000].filter(function (v) { return v >= x0 && v <= x1; })
        .map(function (v) { return {v: v, s: String(v)}; });
    } else {
      var lt = niceTicks(x0, x1, Math.max(2, Math.floor((W - m.l - m.r) / 80)));
      xticks = lt.ticks.map(function (v) { return {v: v, s: fmtTick(v, lt.step)}; });
    }
    xticks.forEach(function (t) {
      var px = x(t.v);
      el("line", {x1: px, x2: px, y1: H - m.b, y2: H - m.b + 5, "class": "rl-tick"}, gx);
      text(gx, px, H - m.b + 18, t.s, {"text-anchor": "middle"});
    });
    if (opts.x && opts.x.label) text(gx, m.l + (W - m.l - m.r) / 2, H - 6, opts.x.label,
                                     {"text-anchor": "middle", "class": "rl-axis-label"});
    if (opts.band && isFinite(opts.band.value)) {
      var b = opts.band, gb = el("g", {"class": "rl-band"}, svg);
      if (isFinite(b.lo) && isFinite(b.hi)) {
        el("rect", {x: m.l, width: W - m.l - m.r, y: y(b.hi), height: Math.max(1, y(b.lo) - y(b.hi)),
                    fill: "#6b7280", "fill-opacity": 0.14}, gb);
      }
      el("line", {x1: m.l, x2: W - m.r, y1: y(b.value), y2: y(b.value), stroke: "#6b7280",
                  "stroke-dasharray": "5 4", "stroke-width": 1.2}, gb);
      text(gb, W - m.r - 4, y(b.value) - 5, (b.label || "baseline") + " " + fmt(b.value, 3),
           {"text-anchor": "end", "class": "rl-band-label"});
    }
    (opts.refs || []).forEach(function (r) {
      if (r.value === null || !isFinite(r.value)) return;
      var gr = el("g", {"class": "rl-ref"}, svg);
      el("line", {x1: m.l, x2: W - m.r, y1: y(r.value), y2: y(r.value), stroke: r.color, "stroke-width": 1.3,
                  "stroke-dasharray": "2 3", "stroke-opacity": 0.9}, gr);
      var ti = el("title", {}, gr); ti.textContent = r.label + ": " + fmt(r.value);
    });
    if (provisional.length) {  // the span of the provisional windows, hatched
      var pid = "rl-hatch-" + Math.random().toString(36).slice(2), defs = el("defs", {}, svg);
      var pat = el("pattern", {id: pid, width: 8, height: 8, patternUnits: "userSpaceOnUse",
                               patternTransform: "rotate(45)"}, defs);
      el("line", {x1: 0, y1: 0, x2: 0, y2: 8, stroke: PROVISIONAL, "stroke-width": 3, "stroke-opacity": 0.25}, pat);
      var px0 = x(Math.min.apply(null, provisional)), gp = el("g", {"class": "rl-provisional"}, svg);
      el("rect", {x: px0 - 4, y: m.t, width: Math.max(8, W - m.r - px0 + 4), height: H - m.t - m.b,
                  fill: "url(#" + pid + ")"}, gp);
      text(gp, Math.min(px0, W - m.r - 70), m.t + 12, "provisional", {"class": "rl-band-label"});
      var tp = el("title", {}, gp); tp.textContent = "provisional windows: their labels are not all in yet (label maturity)";
    }
    series.forEach(function (s) {
      var g = el("g", {"class": "rl-series", "data-name": s.name}, svg);
      var band = s.points.filter(function (p) { return isFinite(p.lo) && isFinite(p.hi) && p.lo !== null && p.hi !== null; });
      if (band.length > 1) {
        var up = band.map(function (p) { return x(p.x) + "," + y(p.hi); });
        var dn = band.slice().reverse().map(function (p) { return x(p.x) + "," + y(p.lo); });
        el("polygon", {points: up.concat(dn).join(" "), fill: s.color, "fill-opacity": 0.13, stroke: "none"}, g);
      }
      var dpath = "", ppath = "", pen = false, ppen = false, prev = null;
      s.points.forEach(function (p) {
        if (p.y === null || p.y === undefined || !isFinite(p.y)) { pen = false; ppen = false; prev = null; return; }
        var at = x(p.x).toFixed(1) + "," + y(p.y).toFixed(1);
        if (p.provisional) {  // grey dashed, from the last mature point on
          ppath += (ppen ? "L" : "M" + (prev && !prev.provisional ? x(prev.x).toFixed(1) + "," + y(prev.y).toFixed(1) + "L" : "")) + at;
          ppen = true; pen = false;
        } else {
          dpath += (pen ? "L" : "M") + at;
          pen = true; ppen = false;
        }
        prev = p;
      });
      el("path", {d: dpath, fill: "none", stroke: s.color, "stroke-width": 2, "stroke-linejoin": "round",
                  "stroke-dasharray": s.dash ? "7 4" : null}, g);
      if (ppath) el("path", {d: ppath, fill: "none", stroke: PROVISIONAL, "stroke-width": 2, "stroke-dasharray": "5 4",
                             "class": "rl-provisional-line"}, g);
      if (s.points.length <= 120) s.points.forEach(function (p) {
        if (p.y === null || !isFinite(p.y)) return;
        if (p.provisional) el("circle", {cx: x(p.x), cy: y(p.y), r: 3.4, fill: "#fff", stroke: s.color,
                                         "stroke-width": 1.6, "class": "rl-provisional-point"}, g);
        else el("circle", {cx: x(p.x), cy: y(p.y), r: 2.8, fill: s.color}, g);
      });
    });
    (opts.markers || []).forEach(function (mk) {
      var g = el("g", {"class": "rl-marker"}, svg), px = x(mk.x), c = mk.color || ALERT;
      el("line", {x1: px, x2: px, y1: m.t, y2: H - m.b, stroke: c, "stroke-width": 1.2, "stroke-dasharray": "3 3"}, g);
      el("path", {d: "M" + (px - 6) + "," + m.t + "L" + (px + 6) + "," + m.t + "L" + px + "," + (m.t + 9) + "Z",
                  fill: c}, g);
      var ti = el("title", {}, g); ti.textContent = mk.label || "alert";
    });
    // hover: the nearest x of any series; a guide and the values of every series there
    var tip = tooltip(container);
    var guide = el("line", {y1: m.t, y2: H - m.b, stroke: "#9ca3af", "stroke-width": 1, visibility: "hidden"}, svg);
    var overlay = el("rect", {x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: "transparent"}, svg);
    var allX = [];
    series.forEach(function (s) { s.points.forEach(function (p) { if (allX.indexOf(p.x) < 0) allX.push(p.x); }); });
    allX.sort(function (a, b) { return a - b; });
    overlay.addEventListener("mousemove", function (ev) {
      var r = svg.getBoundingClientRect(), mx = ev.clientX - r.left, best = null, bd = Infinity;
      allX.forEach(function (v) { var dd = Math.abs(x(v) - mx); if (dd < bd) { bd = dd; best = v; } });
      if (best === null) return;
      guide.setAttribute("x1", x(best)); guide.setAttribute("x2", x(best)); guide.setAttribute("visibility", "visible");
      var head = xType === "time" ? fmtTimeFull(best) : ((opts.x && opts.x.tipLabel) || "x") + " = " + best;
      var html = "<b>" + esc(head) + "</b>";
      series.forEach(function (s) {
        s.points.forEach(function (p) {
          if (p.x !== best) return;
          html += "<br><svg class='rl-dot' width='8' height='8'><circle cx='4' cy='4' r='4' fill='" + esc(s.color) + "'/></svg>" + esc(s.name) + ": " +
            fmt(p.y) + (isFinite(p.lo) && p.lo !== null ? " [" + fmt(p.lo) + ", " + fmt(p.hi) + "]" : "") +
            (p.n !== undefined && p.n !== null ? " <span class='rl-muted'>n=" + p.n + "</span>" : "") +
            (p.provisional ? " <span class='rl-muted'>provisional</span>" : "");
        });
      });
      (opts.markers || []).forEach(function (mk) {
        if (Math.abs(x(mk.x) - x(best)) < 3) html += "<br><span class='rl-alert'>" + esc(mk.label || "alert") + "</span>";
      });
      tip.show(html, mx, ev.clientY - r.top);
    });
    overlay.addEventListener("mouseleave", function () { tip.hide(); guide.setAttribute("visibility", "hidden"); });
    // markers sit above the overlay so that their <title> shows
    Array.prototype.forEach.call(svg.querySelectorAll(".rl-marker"), function (g) { svg.appendChild(g); });
  }

  function lerp(a, b, t) { return Math.round(a + (b - a) * t); }
  function mix(c1, c2, t) {
    return "rgb(" + lerp(c1[0], c2[0], t) + "," + lerp(c1[1], c2[1], t) + "," + lerp(c1[2], c2[2], t) + ")";
  }
  var RED = [220, 38, 38], WHITE = [247, 247, 247], BLUE = [37, 99, 235];
  function diverging(v, lim) {
    if (v === null || !isFinite(v)) return "#e5e7eb";
    var t = Math.max(-1, Math.min(1, v / (lim || 1)));
    return t < 0 ? mix(WHITE, RED, -t) : mix(WHITE, BLUE, t);
  }
  function sequential(v, lo, hi) {
    if (v === null || !isFinite(v)) return "#e5e7eb";
    var t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
    return t < 0.5 ? mix(RED, WHITE, t * 2) : mix(WHITE, BLUE, (t - 0.5) * 2);
  }

  /* Heatmap. opts: {rows: [label], cols: [x (ms)], values: [[v]], counts: [[n]], center: number|null,
   *                 centers: [number] (one per row), label: "value", colTime: true} ; with `center`, colours diverge
   *                 around it (blue above, red below); with `centers`, each row around its own (its baseline). */
  function heatmap(container, opts) {
    clear(container);
    var rows = opts.rows || [], cols = opts.cols || [];
    container.dataset.signature = signature([rows, cols, opts.values, opts.center, opts.centers]);
    if (!rows.length || !cols.length) { empty(container, opts.emptyMessage, 160); return; }
    var W = Math.max(320, container.clientWidth || 800);
    var labelW = Math.min(420, 12 + 6.6 * Math.max.apply(null, rows.map(function (r) { return String(r).length; })));
    var m = {l: labelW, r: 18, t: 8, b: 58};
    var cellH = 24, H = m.t + m.b + rows.length * cellH;
    var cw = (W - m.l - m.r) / cols.length;
    var flat = [];
    opts.values.forEach(function (r) { r.forEach(function (v) { if (v !== null && isFinite(v)) flat.push(v); }); });
    var lo = Math.min.apply(null, flat), hi = Math.max.apply(null, flat);
    var center = opts.center, lim = 0, centers = opts.centers || null;
    if (centers) {
      opts.values.forEach(function (r, i) {
        r.forEach(function (v) { if (v !== null && isFinite(v) && isFinite(centers[i])) lim = Math.max(lim, Math.abs(v - centers[i])); });
      });
    } else if (center !== null && center !== undefined && isFinite(center)) {
      flat.forEach(function (v) { lim = Math.max(lim, Math.abs(v - center)); });
    }
    var colour = function (v) {
      return lim > 0 ? diverging(v === null ? null : v - center, lim) : sequential(v, lo, hi);
    };
    var cellColour = function (v, i) {
      if (!centers) return colour(v);
      return diverging(v === null || !isFinite(centers[i]) ? null : v - centers[i], lim || 1);
    };
    var svg = svgRoot(container, W, H, opts.title);
    var g = el("g", {}, svg), tip = tooltip(container);
    rows.forEach(function (r, i) {
      text(g, m.l - 8, m.t + i * cellH + cellH / 2 + 4, r, {"text-anchor": "end", "class": "rl-row-label"});
      cols.forEach(function (c, j) {
        var v = opts.values[i][j], n = opts.counts ? opts.counts[i][j] : null;
        var rect = el("rect", {x: m.l + j * cw + 0.5, y: m.t + i * cellH + 0.5, width: Math.max(1, cw - 1),
                               height: cellH - 1, fill: cellColour(v, i), "class": "rl-cell"}, g);
        rect.addEventListener("mousemove", function (ev) {
          var rr = svg.getBoundingClientRect();
          tip.show("<b>" + esc(r) + "</b><br>" + esc(opts.colTime === false ? c : fmtTimeFull(c)) + "<br>" +
                   esc(opts.label || "value") + ": " + fmt(v) + (n !== null && n !== undefined ? " <span class='rl-muted'>n=" + n + "</span>" : "") +
                   (centers && v !== null && isFinite(centers[i]) ? "<br>its baseline: " + fmt(centers[i]) + " (" + (v - centers[i] >= 0 ? "+" : "") + fmt(v - centers[i]) + ")" : ""),
                   ev.clientX - rr.left, ev.clientY - rr.top);
        });
        rect.addEventListener("mouseleave", function () { tip.hide(); });
      });
    });
    var every = Math.max(1, Math.ceil(70 / cw));
    cols.forEach(function (c, j) {
      if (j % every) return;
      text(g, m.l + j * cw + cw / 2, m.t + rows.length * cellH + 16,
           opts.colTime === false ? String(c) : fmtTime(c, false), {"text-anchor": "middle", "class": "rl-tick-label"});
    });
    // colour scale
    var sx = m.l, sw = Math.min(240, W - m.l - m.r), sy = H - 24;
    var grad = el("defs", {}, svg), lgid = "rlg" + Math.floor(Math.random() * 1e9);
    var lgr = el("linearGradient", {id: lgid}, grad);
    var a = centers ? -lim : lo, b2 = centers ? lim : hi;  // the scale spans the data; with a centre, white sits at it
    if (centers) colour = function (v) { return diverging(v, lim || 1); };
    for (var k = 0; k <= 10; k++) el("stop", {offset: (k * 10) + "%", "stop-color": colour(a + (b2 - a) * k / 10)}, lgr);
    el("rect", {x: sx, y: sy, width: sw, height: 10, fill: "url(#" + lgid + ")"}, svg);
    text(svg, sx, sy + 22, fmt(a, 3), {"class": "rl-tick-label"});
    text(svg, sx + sw, sy + 22, fmt(b2, 3), {"text-anchor": "end", "class": "rl-tick-label"});
    text(svg, sx + sw + 10, sy + 9, centers ? (opts.label || "value") + " minus the row's own baseline" :
         (opts.label || "value") + (lim > 0 ? " (centred on " + fmt(center, 3) + ")" : ""),
         {"class": "rl-tick-label"});
  }

  /* Interval (forest) plot. opts: {rows: [{label, value, lo, hi, filled, color, group}], zero: 0|null, x: {label}} */
  function forest(container, opts) {
    clear(container);
    var rows = opts.rows || [];
    container.dataset.signature = signature([rows, opts.zero]);
    if (!rows.length) { empty(container, opts.emptyMessage, 120); return; }
    var W = Math.max(320, container.clientWidth || 700);
    var labelW = Math.min(280, 16 + 7 * Math.max.apply(null, rows.map(function (r) { return String(r.label).length; })));
    var m = {l: labelW, r: 110, t: 10, b: 44}, rowH = 30, H = m.t + m.b + rows.length * rowH;
    var vs = [];
    rows.forEach(function (r) { [r.value, r.lo, r.hi].forEach(function (v) { if (v !== null && isFinite(v)) vs.push(v); }); });
    if (opts.zero !== null && opts.zero !== undefined) vs.push(opts.zero);
    var x0 = Math.min.apply(null, vs), x1 = Math.max.apply(null, vs), p = (x1 - x0) * 0.08 || 0.01;
    var xt = niceTicks(x0 - p, x1 + p, Math.max(2, Math.floor((W - m.l - m.r) / 90)));
    x0 = Math.min(x0 - p, xt.ticks[0]); x1 = Math.max(x1 + p, xt.ticks[xt.ticks.length - 1]);
    var x = function (v) { return m.l + (v - x0) / (x1 - x0) * (W - m.l - m.r); };
    var svg = svgRoot(container, W, H, opts.title), g = el("g", {"class": "rl-axis"}, svg);
    xt.ticks.forEach(function (v) {
      el("line", {x1: x(v), x2: x(v), y1: m.t, y2: H - m.b, "class": "rl-grid"}, g);
      text(g, x(v), H - m.b + 16, fmtTick(v, xt.step), {"text-anchor": "middle"});
    });
    if (opts.x && opts.x.label) text(g, m.l + (W - m.l - m.r) / 2, H - 8, opts.x.label,
                                     {"text-anchor": "middle", "class": "rl-axis-label"});
    if (opts.zero !== null && opts.zero !== undefined) {
      el("line", {x1: x(opts.zero), x2: x(opts.zero), y1: m.t, y2: H - m.b, stroke: "#111827",
                  "stroke-dasharray": "4 3"}, svg);
    }
    rows.forEach(function (r, i) {
      var cy = m.t + i * rowH + rowH / 2, c = r.color || PALETTE[i % PALETTE.length];
      var gr = el("g", {"class": "rl-forest-row"}, svg);
      text(gr, m.l - 10, cy + 4, r.label, {"text-anchor": "end", "class": "rl-row-label"});
      if (r.lo !== null && isFinite(r.lo) && isFinite(r.hi)) {
        el("line", {x1: x(r.lo), x2: x(r.hi), y1: cy, y2: cy, stroke: c, "stroke-width": 2.5}, gr);
        el("line", {x1: x(r.lo), x2: x(r.lo), y1: cy - 6, y2: cy + 6, stroke: c, "stroke-width": 2}, gr);
        el("line", {x1: x(r.hi), x2: x(r.hi), y1: cy - 6, y2: cy + 6, stroke: c, "stroke-width": 2}, gr);
      }
      if (r.value !== null && isFinite(r.value)) {
        el("circle", {cx: x(r.value), cy: cy, r: 5.5, fill: r.filled === false ? "#fff" : c, stroke: c,
                      "stroke-width": 2}, gr);
      }
      text(gr, W - m.r + 8, cy + 4, fmt(r.value) + (r.note ? " " + r.note : ""), {"class": "rl-value-label"});
      var ti = el("title", {}, gr);
      ti.textContent = r.label + ": " + fmt(r.value) + " [" + fmt(r.lo) + ", " + fmt(r.hi) + "]" + (r.note ? " " + r.note : "");
    });
  }

  /* Bars: opts {values: [v], labels: [query], x: {label}, y: {label}}; green above 0, red below. */
  function bars(container, opts) {
    clear(container);
    var vals = opts.values || [];
    container.dataset.signature = signature([vals, opts.labels]);
    if (!vals.length) { empty(container, opts.emptyMessage, 160); return; }
    var W = Math.max(320, container.clientWidth || 700), H = opts.height || 220;
    var m = {l: 64, r: 14, t: 10, b: 40};
    var lo = Math.min(0, Math.min.apply(null, vals)), hi = Math.max(0, Math.max.apply(null, vals));
    var yt = niceTicks(lo, hi, 4);
    lo = Math.min(lo, yt.ticks[0]); hi = Math.max(hi, yt.ticks[yt.ticks.length - 1]);
    if (hi === lo) { hi = lo + 1; }
    var y = function (v) { return H - m.b - (v - lo) / (hi - lo) * (H - m.t - m.b); };
    var bw = (W - m.l - m.r) / vals.length;
    var svg = svgRoot(container, W, H, opts.title);
    yAxis(svg, m, W, H, y, yt, opts.y && opts.y.label);
    var paths = {pos: "", neg: "", zero: ""};
    vals.forEach(function (v, i) {
      var k = v > 0 ? "pos" : v < 0 ? "neg" : "zero", x0 = m.l + i * bw, y0 = y(Math.max(v, 0)), y1 = y(Math.min(v, 0));
      paths[k] += "M" + x0.toFixed(2) + "," + y0.toFixed(2) + "h" + Math.max(0.6, bw - (bw > 3 ? 1 : 0)).toFixed(2) +
        "V" + Math.max(y1, y0 + 0.8).toFixed(2) + "h-" + Math.max(0.6, bw - (bw > 3 ? 1 : 0)).toFixed(2) + "Z";
    });
    el("path", {d: paths.pos, fill: "#059669"}, svg);
    el("path", {d: paths.neg, fill: "#dc2626"}, svg);
    el("path", {d: paths.zero, fill: "#9ca3af"}, svg);
    el("line", {x1: m.l, x2: W - m.r, y1: y(0), y2: y(0), stroke: "#111827", "stroke-width": 1}, svg);
    if (opts.x && opts.x.label) text(svg, m.l + (W - m.l - m.r) / 2, H - 10, opts.x.label,
                                     {"text-anchor": "middle", "class": "rl-axis-label"});
    var tip = tooltip(container);
    var overlay = el("rect", {x: m.l, y: m.t, width: W - m.l - m.r, height: H - m.t - m.b, fill: "transparent"}, svg);
    overlay.addEventListener("mousemove", function (ev) {
      var r = svg.getBoundingClientRect(), i = Math.floor((ev.clientX - r.left - m.l) / bw);
      if (i < 0 || i >= vals.length) return;
      tip.show((opts.labels ? "<b>" + esc(opts.labels[i]) + "</b><br>" : "") + fmt(vals[i]),
               ev.clientX - r.left, ev.clientY - r.top);
    });
    overlay.addEventListener("mouseleave", function () { tip.hide(); });
  }

  global.RLCharts = {line: line, heatmap: heatmap, forest: forest, bars: bars, fmt: fmt, esc: esc,
                     fmtTime: fmtTimeFull, palette: PALETTE, alert: ALERT, signature: signature};
})(window);
