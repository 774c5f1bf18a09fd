// Redraws the improved models (estimated cost against time) from the progress JSON.
(function () {
  "use strict";
  var box = document.getElementById("anytime");
  var chart = document.getElementById("anytime-live");
  var body = document.querySelector("#anytime-checkpoints tbody");
  if (!box || !chart) { return; }
  var url = box.getAttribute("data-url"), shown = -1;
  function draw(points) {
    body.innerHTML = "";
    points.forEach(function (c) {
      var tr = document.createElement("tr");
      // the amount as the server words it (shared/money.py), like every other on the page
      [c.label, Number(c.elapsed_seconds).toFixed(1), c.estimated_cost_text || ""].forEach(function (text, i) {
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
      hovertemplate: "%{x:.1f} s: estimated cost %{y:$,.2f} (%{text})<extra></extra>"
    }], {
      // The same axes as figures.ANYTIME_AXES: dollars from $0, so cents never look like a cliff.
      height: 280, margin: {l: 10, r: 10, t: 30, b: 10},
      xaxis: {title: {text: "Training time (s)"}, rangemode: "tozero", automargin: true},
      yaxis: {title: {text: "Estimated cost per patient", standoff: 8}, rangemode: "tozero",
              tickprefix: "$", tickformat: ",.2~f", automargin: true}
    }, {responsive: true, displaylogo: false});
  }
  // The facts beside the chart (model in use, its cost, time spent) follow the same JSON as
  // the bar above and the table below, so the card never says "none yet" under r=1's result.
  var facts = {
    round: box.querySelector("[data-anytime-round]"),
    cost: box.querySelector("[data-anytime-cost]"),
    time: box.querySelector("[data-anytime-time]")
  };
  function setFact(node, text, note) {
    if (!node) { return; }
    node.textContent = text;
    if (note) {
      var span = document.createElement("span");
      span.className = "small muted";
      span.textContent = " (" + note + ")";
      node.appendChild(span);
    }
  }
  function drawFacts(d) {
    var a = d.anytime;
    if (!a) { return; }
    var upTo = a.requested === null || a.requested === undefined ? "" :
      "training goes up to " + a.parameter + "=" + a.requested;
    setFact(facts.round, a.round || (d.status === "queued" ? "none yet" : "none yet: the first round is fitting"), upTo);
    if (a.estimated_cost === null || a.estimated_cost === undefined) {
      setFact(facts.cost, "not yet known", d.status === "queued" ? "" : "known when the first round ends");
    } else {
      setFact(facts.cost, a.estimated_cost_text + " per patient", a.estimate);
    }
    setFact(facts.time,
      a.seconds_spent === null || a.seconds_spent === undefined ? "not started" : Number(a.seconds_spent).toFixed(1) + " s",
      a.seconds_to_this_model === null || a.seconds_to_this_model === undefined ? "" :
        "the model in use was ready after " + Number(a.seconds_to_this_model).toFixed(1) + " s");
  }
  function tick() {
    fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}})
      .then(function (r) { return r.json(); })
      .then(function (d) {
        drawFacts(d);
        var points = d.checkpoints || [];
        if (points.length !== shown) { shown = points.length; draw(points); }
        if (!d.finished) { setTimeout(tick, 1000); }
      })
      .catch(function () { setTimeout(tick, 4000); });
  }
  window.addEventListener("load", tick);
})();
