// Redraws the improved models (estimated cost against time) from the progress JSON.
(function () {
  "use strict";
  var box = document.getElementById("anytime");
  var chart = document.getElementById("anytime-live");
  var body = document.querySelector("#anytime-checkpoints tbody");
  if (!box || !chart) { return; }
  var url = box.getAttribute("data-url"), shown = -1;
  function money(v) { return v === null || v === undefined ? "" : "$" + Number(v).toFixed(2); }
  function draw(points) {
    body.innerHTML = "";
    points.forEach(function (c) {
      var tr = document.createElement("tr");
      [c.label, Number(c.elapsed_seconds).toFixed(1), money(c.estimated_cost)].forEach(function (text, i) {
        var td = document.createElement("td");
        td.textContent = text;
        if (i) { td.className = "num"; }
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
    var costed = points.filter(function (c) { return c.estimated_cost !== null; });
    if (typeof Plotly === "undefined" || !costed.length) { return; }
    Plotly.react(chart, [{
      x: costed.map(function (c) { return c.elapsed_seconds; }),
      y: costed.map(function (c) { return c.estimated_cost; }),
      text: costed.map(function (c) { return c.label; }),
      mode: "lines+markers+text", textposition: "top center", line: {shape: "hv", color: "#1f5fbf"},
      hovertemplate: "%{x:.1f} s: estimated cost %{y:,.2f} (%{text})<extra></extra>"
    }], {
      height: 280, margin: {l: 60, r: 10, t: 20, b: 50},
      xaxis: {title: {text: "Training time (s)"}, rangemode: "tozero"},
      yaxis: {title: {text: "Estimated cost per patient"}}
    }, {responsive: true, displaylogo: false});
  }
  function tick() {
    fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.json(); })
      .then(function (d) {
        var points = d.checkpoints || [];
        if (points.length !== shown) { shown = points.length; draw(points); }
        if (!d.finished) { setTimeout(tick, 2000); }
      })
      .catch(function () { setTimeout(tick, 4000); });
  }
  window.addEventListener("load", tick);
})();
