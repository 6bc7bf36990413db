// genlab site: filter and sort tables in the page. A classic script (no modules, no fetch), so it
// runs from file:// as well as from a web server.
(function () {
  "use strict";

  function rowsOf(table) { return Array.prototype.slice.call(table.tBodies[0].rows); }

  // Filters: each .controls[data-for=ID] drives table#ID. An input with data-key="text" matches the
  // row's text; any other data-key matches a token of the row's data-<key> attribute.
  function applyFilters(controls) {
    var table = document.getElementById(controls.getAttribute("data-for"));
    if (!table) return;
    var inputs = controls.querySelectorAll("[data-key]");
    var shown = 0, rows = rowsOf(table);
    rows.forEach(function (row) {
      var ok = true;
      inputs.forEach(function (input) {
        var key = input.getAttribute("data-key"), want = input.value.trim().toLowerCase();
        if (!want || !ok) return;
        if (key === "text") {
          ok = row.textContent.toLowerCase().indexOf(want) !== -1;
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

  // Query string (?verdict=reproduced&family=grokking) pre-sets the index's paper filters.
  function presetFromQuery(controls) {
    if (!window.location.search || controls.getAttribute("data-for") !== "papers-table") return;
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
