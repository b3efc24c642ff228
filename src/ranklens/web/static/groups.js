/* ranklens dashboard: the Groups page. app.js calls window.RLGroupsPage(ctx) with its helpers when the page is
 * /groups; every number comes from the JSON API. */
(function () {
  "use strict";
  var C = window.RLCharts, esc = C.esc, fmt = C.fmt;
  var H = null;  // the helpers of app.js, given when the page starts

  function explainTable(e) {
    var rows = e.rows || [], ideal = e.ideal_rows || [], n = Math.max(rows.length, ideal.length), k = e.k;
    var h = "<table class='rl' id='explain-rows'><thead><tr><th>pos</th><th>rank</th><th>score</th><th class='l'>item</th>" +
      "<th class='l'>labels</th><th>relevance</th><th>gain</th><th>discount</th><th>contribution</th><th>DCG</th>" +
      "<th class='l div'>ideal item</th><th>ideal gain</th><th>contribution</th><th>IDCG</th></tr></thead><tbody>";
    for (var i = 0; i < n; i++) {
      var r = rows[i], g = ideal[i];
      if (k && i === k) {
        h += "<tr class='cutoff'><td colspan='14'>cutoff k = " + k + ": the positions below do not count in " +
             esc(e.measure) + " (shown with what they would add at a deeper cutoff)</td></tr>";
      }
      var cls = [r && r.gain > 0 ? "rel" : "", k && i >= k ? "beyond" : ""].filter(Boolean).join(" ");
      h += "<tr" + (cls ? " class='" + cls + "'" : "") + "><td>" + (i + 1) + "</td>";
      if (r) {
        h += "<td>" + (r.rank === null || r.rank === undefined ? "" : esc(r.rank)) + "</td>" +
          "<td>" + (r.score === null || r.score === undefined ? "" : fmt(r.score, 4)) + "</td>" +
          "<td class='l mono'>" + esc(r.item) + "</td>" +
          "<td class='l labels'>" + esc((r.labels || []).join(", ")) + "</td>" +
          "<td>" + (r.relevance === null || r.relevance === undefined ? "" : fmt(r.relevance, 2)) + "</td>" +
          "<td>" + fmt(r.gain_used !== undefined ? r.gain_used : r.gain, 4) + "</td>" +
          "<td>" + fmt(r.discount, 5) + "</td><td>" + fmt(r.contribution, 5) + "</td><td>" + fmt(r.running_dcg, 5) + "</td>";
      } else {
        h += "<td></td><td></td><td></td><td></td><td></td><td></td><td></td><td></td><td></td>";
      }
      h += g ? "<td class='l mono div'>" + esc(g.item) + "</td><td>" + fmt(g.gain, 4) + "</td><td>" + fmt(g.contribution, 5) +
               "</td><td>" + fmt(g.running_idcg, 5) + "</td>" : "<td class='div'></td><td></td><td></td><td></td>";
      h += "</tr>";
    }
    return h + "</tbody></table>";
  }
  // What the card explains for the table's measure: a naive NDCG or DCG at cutoff K is explained as itself (family
  // and K); any other measure (map, mrr, a debiased ips_ measure...) is not a sum of gains over positions, so the
  // card explains NDCG at the form's k and says so.
  function explainedAs(metric, label) {
    var m = /^(n?dcg)@(\d+)$/.exec(String(metric || ""));
    return m && !(label && label.kind === "debiased") ? {measure: m[1], k: m[2]} : null;
  }
  window.RLGroupsPage = function (x) {
    H = x;
    var info = x.info, $ = x.$, $all = x.$all, api = x.api, fail = x.fail, showError = x.showError,
      readUrl = x.readUrl, writeUrl = x.writeUrl, fill = x.fill, values = x.values, onChange = x.onChange,
      fillChoices = x.fillChoices, models = x.models, versions = x.versions, envs = x.envs,
      setupMeasure = x.setupMeasure, sortableTable = x.sortableTable, signClass = x.signClass, signed = x.signed,
      pct = x.pct, dateOnly = x.dateOnly, addDays = x.addDays, tsMs = x.tsMs, seriesName = x.seriesName;
    var form = $("#group-form"), root = $("#groups-controls"), url = readUrl();
    fillChoices($("select[name=model_version]", form), versions());
    fillChoices($("select[name=environment]", form), envs());
    fill(form, url, ["group_id", "k", "model_version", "environment"]);
    var metricOf = setupMeasure(root, url);
    var last = dateOnly(info.last), names = ["start", "end", "order", "limit"];
    fill(root, Object.assign({start: last ? addDays(last, -6) : "", end: last ? addDays(last, 1) : ""}, url), names);
    // filters from the address (a slice's "groups" link): series and slice columns
    var filterNames = ["model", "model_version", "environment"].concat(info.slices || []);
    var filters = {};
    filterNames.forEach(function (n) { if (url["f_" + n] !== undefined) filters[n] = url["f_" + n]; });
    function showFilters() {
      var keys = Object.keys(filters);
      $("#groups-filters").innerHTML = keys.length ? "Only the lists of " + keys.map(function (k) {
        return "<span class='chip'>" + esc(k) + "=" + esc(filters[k]) + "</span>"; }).join("") +
        " <a href='#' id='clear-filters'>show every list</a>" : "";
      var c = $("#clear-filters");
      if (c) c.addEventListener("click", function (ev) { ev.preventDefault(); filters = {}; showFilters(); loadGroups(); });
    }
    function explain() {
      showError(null);
      var s = values(form, ["group_id", "k", "model_version", "environment"]);
      if (!s.group_id) return;
      var metric = metricOf(), as = explainedAs(metric, tableLabel);
      writeUrl(Object.assign({}, prefixed(), s, values(root, names), {measure: metric}));
      api("/api/explain", Object.assign({measure: as ? as.measure : "ndcg"}, s), "explain").then(function (e) {
        var shown = String(e.measure);  // with its cutoff: ndcg@10
        var differs = shown === metric ? "" : "The table shows " + metric + (as ? "" : ", which this card does not " +
          "decompose" + (tableLabel && tableLabel.kind === "debiased" ? " (its gains are debiased; these are not)" : "")) +
          "; this card explains " + shown + ".";
        $("#explain-card").hidden = false;
        $("#explain-title").textContent = "group " + (e.query || s.group_id) + " \u2014 " + e.measure +
          [s.model_version, s.environment].filter(Boolean).map(function (x) { return " \u00b7 " + x; }).join("");
        var cut = e.k ? "@" + e.k : "";
        $("#explain-summary").innerHTML = "DCG" + cut + " = <b>" + fmt(e.dcg, 5) + "</b> &nbsp; IDCG" + cut + " = <b>" +
          fmt(e.idcg, 5) + "</b> &nbsp; " + esc(e.measure) + " = DCG / IDCG = <b>" + fmt(e.value, 5) + "</b>";
        $("#explain-table").innerHTML = explainTable(e);
        $("#explain-note").innerHTML = (differs ? "<span id='explain-measure-note'>" + esc(differs) + "</span><br>" : "") +
          "<span class='formula'>contribution = gain &times; discount, discount = 1 / log2(position + 1)</span>" +
          (e.note ? " &nbsp; " + esc(e.note) : "") + (e.convention ? " &nbsp; convention: " + esc(e.convention) : "");
      }).catch(function (err) { $("#explain-card").hidden = true; fail(err); });
    }
    var autoDone = false, tableLabel = null;
    function pick(row) {  // a group of the table: explained at the cutoff of the table's measure when it has one
      var as = explainedAs(metricOf(), tableLabel);
      if (as) $("[name=k]", form).value = as.k;
      $("[name=group_id]", form).value = row.group_id;
      if (row.model_version) $("[name=model_version]", form).value = row.model_version;
      if (row.environment) $("[name=environment]", form).value = row.environment;
      explain();
    }
    form.addEventListener("submit", function (ev) { ev.preventDefault(); explain(); });
    function prefixed() {
      var out = {};
      Object.keys(filters).forEach(function (k) { out["f_" + k] = filters[k]; });
      return out;
    }
    function loadGroups() {
      var s = values(root, names), metric = metricOf();
      $("#groups-hint").textContent = metric + ", click a group id to explain it";
      if (!url.group_id) writeUrl(Object.assign({measure: metric}, prefixed(), s));
      api("/api/groups", Object.assign({measure: metric}, s, filters), "groups").then(function (res) {
        H.measureKind($("#groups-measure-kind"), metric, res.label);
        tableLabel = res.label;
        var slices = info.slices || [];
        var cols = [
          {key: "group_id", label: "group id", html: function (v) { return "<a href='#' class='pick mono' data-id='" + esc(v) + "'>" + esc(v) + "</a>"; }},
          {key: "model", label: "model"}, {key: "model_version", label: "version"}, {key: "environment", label: "environment"},
          {key: "timestamp", label: "served (UTC)", fmt: function (v) { return String(v || "").replace("T", " ").slice(0, 16); }}
        ].concat(slices.map(function (c) { return {key: c, label: c}; })).concat([
          {key: "value", label: metric, num: true, fmt: function (v) { return fmt(v, 4); }},
          {key: "n_items", label: "items", num: true}, {key: "n_relevant", label: "relevant", num: true},
          {key: "provisional", label: "labels", html: function (v) {  // served after the labels' maturity
            return v ? "<span class='badge' title='labels not mature: the value may still rise'>provisional</span>" : "mature"; }}
        ]);
        sortableTable($("#groups-table"), cols, res.rows, null);
        if (res.rows.length) $("[name=group_id]", form).placeholder = "a prediction group id, e.g. " + res.rows[0].group_id;
        if (!autoDone && !url.group_id && res.rows.length) {  // first visit: explain the worst group straight away
          autoDone = true;
          pick(res.rows[0]);
        }
        $all("a.pick", $("#groups-table")).forEach(function (a) {
          a.addEventListener("click", function (ev) {
            ev.preventDefault();
            var row = res.rows.filter(function (r) { return r.group_id === a.getAttribute("data-id"); })[0];
            pick(row || {group_id: a.getAttribute("data-id")});
            window.scrollTo({top: 0, behavior: "smooth"});
          });
        });
      }).catch(fail);
    }
    showFilters();
    onChange(root, loadGroups);
    loadGroups();
    if (url.group_id) explain();
  };
})();
