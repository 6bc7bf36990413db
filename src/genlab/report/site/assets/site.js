// genlab site: filter and sort tables in the page. A classic script (no modules, no fetch), so it
// runs from file:// as well as from a web server.
(function () {
  "use strict";

  function rowsOf(table) { return Array.prototype.slice.call(table.tBodies[0].rows); }

  // Filters: each .controls[data-for=ID] drives table#ID. An input with data-key="text" matches the
  // row's text; data-key="metric" picks the final metric a row's data-metrics (JSON) shows in its
  // td.metric (a row without it is hidden), and data-key="metric-min"/"metric-max" keep the rows
  // whose value lies in that range; any other data-key matches a token of the row's data-<key>.
  function metricsOf(row) {
    if (!row._metrics) {
      try { row._metrics = JSON.parse(row.getAttribute("data-metrics") || "{}"); }
      catch (e) { row._metrics = {}; }
    }
    return row._metrics;
  }

  function number(value) {
    if (value === null || value === undefined) return "\u2014";
    return Number(value.toPrecision(4)).toString();
  }

  function applyFilters(controls) {
    var table = document.getElementById(controls.getAttribute("data-for"));
    if (!table) return;
    var inputs = controls.querySelectorAll("[data-key]");
    var picker = controls.querySelector("[data-key=metric]");
    var metric = picker ? (picker.value || picker.getAttribute("data-default") || "") : "";
    var chosen = picker ? picker.value : "";
    var head = table.querySelector("th .metric-name");
    if (head) head.textContent = metric || "metric";
    var shown = 0, rows = rowsOf(table);
    rows.forEach(function (row) {
      var ok = true, value = null;
      if (picker) {
        var metrics = metricsOf(row);
        value = metric && (metric in metrics) ? metrics[metric] : null;
        var cell = row.querySelector("td.metric");
        if (cell) { cell.textContent = number(value); cell.setAttribute("data-sort", value === null ? "" : value); }
        if (chosen && !(chosen in metrics)) ok = false;
      }
      inputs.forEach(function (input) {
        var key = input.getAttribute("data-key"), want = input.value.trim().toLowerCase();
        if (!want || !ok || key === "metric") return;
        if (key === "text") {
          ok = row.textContent.toLowerCase().indexOf(want) !== -1;
        } else if (key === "metric-min" || key === "metric-max") {
          var bound = parseFloat(want);
          if (isNaN(bound)) return;
          ok = value !== null && (key === "metric-min" ? value >= bound : value <= bound);
        } else {
          var have = (row.getAttribute("data-" + key) || "").split(" ");
          ok = have.indexOf(want) !== -1;
        }
      });
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    var count = controls.querySelector(".count");
    if (count) count.textContent = "showing " + shown + " of " + rows.length;
  }

  // Query string (?verdict=reproduced&family=grokking) pre-sets the index's paper filters, and
  // (?kind=sweep&status=failed) the runs page's.
  var FROM_QUERY = ["papers-table", "runs-table"];
  function presetFromQuery(controls) {
    if (!window.location.search || FROM_QUERY.indexOf(controls.getAttribute("data-for")) === -1) return;
    var params = new URLSearchParams(window.location.search);
    controls.querySelectorAll("[data-key]").forEach(function (input) {
      var v = params.get(input.getAttribute("data-key"));
      if (v !== null) input.value = v;
    });
  }

  document.querySelectorAll(".controls[data-for]").forEach(function (controls) {
    presetFromQuery(controls);
    controls.addEventListener("input", function () { applyFilters(controls); });
    controls.addEventListener("change", function () { applyFilters(controls); });
    applyFilters(controls);
  });

  // Sorting: a click on a header button sorts by that column (data-sort of the cell if present,
  // else its text; numbers numerically); a second click reverses.
  function key(cell) {
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent;
    var num = parseFloat(raw);
    return isNaN(num) || String(num) !== String(raw).trim() ? raw.trim().toLowerCase() : num;
  }

  document.querySelectorAll("th button.sort").forEach(function (button) {
    button.addEventListener("click", function () {
      var th = button.parentNode, table = th.closest("table");
      var col = Array.prototype.indexOf.call(th.parentNode.children, th);
      var dir = th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending";
      th.parentNode.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir);
      var sign = dir === "ascending" ? 1 : -1, body = table.tBodies[0];
      rowsOf(table)
        .map(function (row, i) { return { row: row, k: key(row.cells[col]), i: i }; })
        .sort(function (a, b) {
          if (a.k === b.k) return a.i - b.i;
          if (typeof a.k === typeof b.k) return (a.k < b.k ? -1 : 1) * sign;
          return (typeof a.k === "number" ? -1 : 1) * sign;
        })
        .forEach(function (item) { body.appendChild(item.row); });
    });
  });
})();
