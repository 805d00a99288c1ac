(function () {
  "use strict";
  // Sort the raw table by a clicked heading; numeric columns sort by data-sort or the number in the cell.
  function key(td, numeric) {
    var v = td.getAttribute("data-sort");
    if (v === null) { v = td.textContent.trim(); }
    if (!numeric) { return v.toLowerCase(); }
    var n = parseFloat(v.replace(/[^0-9.eE+-]/g, ""));
    return isNaN(n) ? -Infinity : n;
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var ths = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(ths, function (th, col) {
      th.addEventListener("click", function () {
        var numeric = th.getAttribute("data-type") === "num";
        var asc = !th.classList.contains("asc");
        Array.prototype.forEach.call(ths, function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(asc ? "asc" : "desc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col], numeric), y = key(b.cells[col], numeric);
          return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  // Print everything, including folded sample details.
  window.addEventListener("beforeprint", function () {
    Array.prototype.forEach.call(document.querySelectorAll("details"), function (d) { d.open = true; });
  });
  // Record how many chart marks laid out with a visible size (checked by the headless-browser test).
  function rendered() {
    var n = 0;
    Array.prototype.forEach.call(document.querySelectorAll("svg.chart rect.bar, svg.chart circle.dot"), function (el) {
      var r = el.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) { n++; }
    });
    var root = document.documentElement;
    root.setAttribute("data-charts-rendered", String(n));
    var cells = 0;
    Array.prototype.forEach.call(document.querySelectorAll("svg.heatmap rect.hm"), function (el) {
      var r = el.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) { cells++; }
    });
    root.setAttribute("data-heatmap-cells", String(cells));
    // Where the sweep and mesh sections lie on the page (for the documentation's screenshot).
    ["sweeps", "mesh"].forEach(function (id) {
      var el = document.getElementById(id);
      if (el) {
        var r = el.getBoundingClientRect();
        root.setAttribute("data-" + id + "-y", Math.round(r.top + window.scrollY) + "," + Math.round(r.bottom + window.scrollY));
      }
    });
    // How far the page is wider than the window (0 = fits; wide tables scroll inside their box).
    root.setAttribute("data-overflow-x", String(Math.max(0, root.scrollWidth - root.clientWidth)));
    // How far the table of all cases is wider than its box (0 = no horizontal scrollbar).
    var all = document.querySelector("#table .scroll");
    if (all) { root.setAttribute("data-table-overflow-x", String(Math.max(0, all.scrollWidth - all.clientWidth))); }
  }
  if (document.readyState === "complete") { rendered(); } else { window.addEventListener("load", rendered); }
})();
