/* ranklens dashboard: the Alerts page (every alert with its state, severity, root cause and links, a page at a
   time; with a token, buttons to acknowledge and snooze an alert: POST /api/ack, /api/snooze). */
(function () {
  "use strict";
  var C = window.RLCharts, esc = C.esc, fmt = C.fmt;

  function when(v) { return v ? String(v).slice(0, 16).replace("T", " ").replace(/ 00:00$/, "") : ""; }
  function sliceText(t) {
    return t ? (t.slice || (t.column + "=" + t.value + (t.column2 ? " " + t.column2 + "=" + t.value2 : ""))) : "";
  }
  function post(path, body) {  // an action: JSON only, the token travels in the cookie
    return fetch(path, {method: "POST", credentials: "same-origin",
                        headers: {"Content-Type": "application/json", "Accept": "application/json"},
                        body: JSON.stringify(body)}).then(function (r) {
      return r.json().catch(function () { return {error: "HTTP " + r.status}; }).then(function (b) {
        if (!r.ok) throw new Error((b && b.error) || ("HTTP " + r.status));
        return b;
      });
    });
  }

  window.RLAlertsPage = function (h) {
    var $ = h.$, root = $("#alerts-controls"), url = h.readUrl(), names = ["state", "start", "end", "limit"];
    var actions = (h.info.actions || []).length > 0;
    var offset = Math.max(0, parseInt(url.offset || "0", 10) || 0);
    var lim = $("select[name=limit]", root), n = parseInt(url.limit || "", 10);
    if (n >= 1 && n <= 200 && !lim.querySelector("option[value='" + n + "']")) {  // a page size from the address
      var o = document.createElement("option"); o.value = o.textContent = String(n); lim.insertBefore(o, lim.firstChild);
    }
    h.fill(root, Object.assign({state: "all", limit: "25"}, url), names);

    // the series and the window of an alert as the filters of another page
    function seriesQuery(r, prefix) {
      var q = {};
      ["model", "model_version", "environment"].forEach(function (k) {
        if (r[k] !== null && r[k] !== undefined) q[(prefix || "") + k] = r[k];
      });
      return q;
    }
    function windowOf(r) {  // the last window that fired: [start, end) in days, for the date pickers
      var s = h.dateOnly(r.last_window), e = h.dateOnly(r.last_window_end);
      return {start: s, end: e > s ? e : h.addDays(s, 1)};
    }
    function slicesLink(r) {
      var w = windowOf(r), q = Object.assign({measure: r.metric, start: w.start, end: w.end}, seriesQuery(r));
      if (r.top_slice && r.top_slice.column2) q.depth = "2";
      return "/slices?" + new URLSearchParams(q).toString();
    }
    function groupsLink(r) {
      var t = r.top_slice, w = windowOf(r), q = Object.assign({measure: r.metric, start: w.start, end: w.end},
                                                             seriesQuery(r, "f_"));
      q["f_" + t.column] = t.value;
      if (t.column2) q["f_" + t.column2] = t.value2;
      return "/groups?" + new URLSearchParams(q).toString();
    }
    function opsCell(r) {  // acknowledgement and snooze: what is recorded, and the buttons (with a token)
      var out = [];
      if (r.acknowledged_at) out.push("<span class='badge'>acknowledged" + (r.acknowledged_by ? " by " + esc(r.acknowledged_by) : "") + "</span>");
      if (r.snoozed_until) out.push("<span class='badge'>snoozed until " + esc(when(r.snoozed_until)) + "</span>");
      if (actions) {
        if (r.state === "open" && !r.acknowledged_at) out.push("<button type='button' class='small' data-act='ack' data-id='" + esc(r.alert_id) + "'>acknowledge</button>");
        out.push(r.snoozed_until
          ? "<button type='button' class='small' data-act='unsnooze' data-id='" + esc(r.alert_id) + "'>lift snooze</button>"
          : "<button type='button' class='small' data-act='snooze' data-id='" + esc(r.alert_id) + "'>snooze 24h</button>");
      }
      if (r.delivery_error) out.push("<span class='badge bad' title='" + esc(r.delivery_error) + "'>not delivered</span>");
      return out.join(" ");
    }

    function table(rows) {
      var cols = [["#", "num"], ["state", ""], ["monitor · series", ""], ["opened", ""], ["last fired", ""],
                  ["resolved", ""], ["windows", "num"], ["value", "num"], ["baseline", "num"], ["root cause", ""],
                  ["reason", ""], ["on call", ""]];
      var html = "<table class='rl' id='alerts-rows'><thead><tr>" + cols.map(function (c) {
        return "<th class='" + (c[1] ? "" : "l") + "'>" + esc(c[0]) + "</th>";
      }).join("") + "</tr></thead><tbody>";
      rows.forEach(function (r) {
        var t = r.top_slice, cause = t
          ? "<a href='" + esc(slicesLink(r)) + "' title='the slices of this window and series'>" + esc(sliceText(t)) +
            "</a><br><span class='rl-muted'>" + fmt(t.baseline_value, 4) + " → " + fmt(t.window_value, 4) + "</span>" +
            " · <a class='small' href='" + esc(groupsLink(r)) + "' title='the worst lists of this slice'>its lists</a>"
          : "<span class='rl-muted'>none</span>";
        var why = r.state === "resolved" && r.resolved_reason ? r.resolved_reason : (r.reason || "");
        html += "<tr id='alert-" + esc(r.alert_id) + "' data-state='" + esc(r.state) + "'>" +
          "<td>" + esc(r.alert_id) + "</td>" +
          "<td class='l'><span class='badge " + (r.state === "open" ? "bad" : "good") + "'>" + esc(r.state) + "</span>" +
            (r.severity ? "<br><span class='rl-muted severity'>" + esc(r.severity) + "</span>" : "") + "</td>" +
          "<td class='l'>" + esc(r.monitor) + "<br><span class='rl-muted'>" + esc(h.seriesName(r)) + "</span></td>" +
          "<td class='l nowrap'>" + esc(when(r.opened_window)) + "</td>" +
          "<td class='l nowrap'>" + esc(when(r.last_window)) + "</td>" +
          "<td class='l nowrap'>" + esc(r.state === "resolved" ? when(r.resolved_window) : "") + "</td>" +
          "<td>" + esc(r.n_windows) + "</td>" +
          "<td>" + fmt(r.value, 4) + "</td>" +
          "<td>" + fmt(r.baseline, 4) + "</td>" +
          "<td class='l'>" + cause + "</td>" +
          "<td class='l wrap reason'>" + esc(why) + "</td>" +
          "<td class='l ops'>" + opsCell(r) + "</td></tr>";
      });
      return html + "</tbody></table>";
    }

    function pager(res) {
      var from = res.total ? res.offset + 1 : 0, to = Math.min(res.offset + res.rows.length, res.total);
      var box = $("#alerts-pager");
      box.innerHTML = "<button type='button' data-go='prev'" + (res.offset > 0 ? "" : " disabled") + ">\u2190 newer</button>" +
        "<span class='pager-text'>" + from + "\u2013" + to + " of " + res.total + "</span>" +
        "<button type='button' data-go='next'" + (to < res.total ? "" : " disabled") + ">older \u2192</button>";
      Array.prototype.forEach.call(box.querySelectorAll("button"), function (b) {
        b.addEventListener("click", function () {
          offset = b.getAttribute("data-go") === "next" ? res.offset + res.limit : Math.max(0, res.offset - res.limit);
          load();
        });
      });
    }

    function load() {
      h.showError(null);
      var s = h.values(root, names);
      h.writeUrl(Object.assign({}, s, {offset: offset || ""}));
      h.api("/api/alert-list", Object.assign({offset: offset}, s), "alert-list").then(function (res) {
        if (res.offset > 0 && !res.rows.length && res.total) { offset = 0; load(); return; }
        var c = res.counts || {};
        $("#alerts-kpis").innerHTML =
          h.kpi("open", String(c.open || 0), "alerts whose windows still fire", c.open ? "bad" : "good") +
          h.kpi("resolved", String(c.resolved || 0), "alerts whose condition stopped") +
          h.kpi("shown", res.total ? (res.offset + 1) + "\u2013" + (res.offset + res.rows.length) : "0",
                "of " + res.total + (res.state === "all" ? "" : " " + res.state));
        $("#alerts-list").innerHTML = res.rows.length ? table(res.rows)
          : "<div class='rl-empty small'>No alert in this selection. <code>ranklens monitor check</code> records them.</div>";
        pager(res);
        Array.prototype.forEach.call($("#alerts-list").querySelectorAll("button[data-act]"), function (b) {
          b.addEventListener("click", function () {
            var id = parseInt(b.getAttribute("data-id"), 10), act = b.getAttribute("data-act");
            var req = act === "ack" ? post("/api/ack", {alert_id: id})
              : post("/api/snooze", act === "snooze" ? {alert_id: id, duration: "24h"} : {alert_id: id, off: true});
            b.disabled = true;
            req.then(function () { load(); }).catch(function (e) { b.disabled = false; h.fail(e); });
          });
        });
        if (location.hash) { var a = document.getElementById(location.hash.slice(1)); if (a) a.classList.add("hl"); }
      }).catch(h.fail);
    }
    h.onChange(root, function () { offset = 0; load(); });
    load();
  };
})();
