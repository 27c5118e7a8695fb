// Draws every chart of the embedded data with uPlot (mode 2: each series has
// its own x values). After a chart has drawn, its element carries
// data-drawn="1" and data-series="N" (series with points on the canvas), so
// a headless browser test can check each chart from the DOM.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("surge-data").textContent);
  var palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];
  var root = document.getElementById("charts");
  var groups = {};
  function groupEl(name) {
    if (!groups[name]) {
      var h = document.createElement("h2");
      h.textContent = name.charAt(0).toUpperCase() + name.slice(1);
      var g = document.createElement("div");
      g.className = "grid";
      root.appendChild(h);
      root.appendChild(g);
      groups[name] = g;
    }
    return groups[name];
  }
  function seriesOpts(s) {
    var color = palette[s.run % palette.length];
    var o = {label: s.label, stroke: color, width: 1.5,
      facets: [{scale: "x", auto: true}, {scale: "y", auto: true}]};
    if (s.style === "points") {
      // Sweep markers stand out (the knee hollow, the operating point
      // filled); a request scatter stays light.
      var marker = !!s.marker;
      o.paths = uPlot.paths.points();
      o.points = {show: false, size: marker ? 13 : 4, width: marker ? 2 : 0};
      o.fill = marker ? (s.marker === "knee" ? "#fff" : "#000") : color + "99";
      o.width = marker ? 2 : 0;
    } else if (s.style === "step") {
      o.paths = uPlot.paths.stepped({align: 1});
      o.fill = color + "22";
      o.points = {show: false};
    } else {
      o.paths = uPlot.paths.linear();
      o.points = {show: s.x.length < 40, size: 5, stroke: color, fill: color};
    }
    return o;
  }
  data.charts.forEach(function (c) {
    var el = document.createElement("div");
    el.className = "chart";
    el.id = "chart-" + c.id;
    el.setAttribute("data-chart", c.id);
    el.setAttribute("data-expected", String(c.series.length));
    groupEl(c.group).appendChild(el);
    var series = [null], rows = [null];
    c.series.forEach(function (s) {
      series.push(seriesOpts(s));
      rows.push([s.x, s.y]);
    });
    var width = Math.max(500, Math.min(640, el.clientWidth || 620));
    var opts = {
      title: c.title, mode: 2, width: width, height: 300,
      legend: {live: false},
      scales: {x: {time: false, distr: c.log_x ? 3 : 1}, y: {}},
      axes: [{label: c.x_label, scale: "x"}, {label: c.y_label, scale: "y"}],
      series: series,
      hooks: {draw: [function (u) {
        // A series counts as drawn when uPlot built a path for it (a
        // stroke or a fill), not merely when it has data.
        var drawn = 0;
        for (var i = 1; i < u.series.length; i++) {
          var p = u.series[i]._paths;
          if (p && (p.stroke || p.fill) && u.data[i][0].length > 0) drawn++;
        }
        // A sweep's points carry their values' names.
        var ctx = u.ctx;
        ctx.save();
        ctx.font = "11px sans-serif";
        ctx.fillStyle = "#333";
        c.series.forEach(function (s) {
          if (!s.labels) return;
          for (var k = 0; k < s.labels.length; k++) {
            ctx.fillText(s.labels[k], u.valToPos(s.x[k], "x", true) + 6, u.valToPos(s.y[k], "y", true) - 6);
          }
        });
        ctx.restore();
        el.setAttribute("data-series", String(drawn));
        el.setAttribute("data-drawn", "1");
      }]},
    };
    try {
      new uPlot(opts, rows, el);
    } catch (e) {
      el.setAttribute("data-error", String(e));
      el.textContent = "chart failed: " + e;
    }
  });
  document.body.setAttribute("data-charts-done", String(data.charts.length));
})();
