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
      // A sweep's curves go up front, by its stage table.
      var parent = (name === "sweep" && document.getElementById("charts-sweep")) || root;
      parent.appendChild(h);
      parent.appendChild(g);
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
    } else if (s.style === "bars") {
      // Stacked bars: each series is a running total, drawn over the
      // taller one before it.
      o.paths = uPlot.paths.bars({size: [0.6, 80]});
      o.fill = color;
      o.width = 0;
      o.points = {show: false};
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
  // decorate draws what uPlot does not: the spans outside a run's steady
  // state (shaded, named), stage boundaries, each sweep point's interval
  // (error bars) and its swept value.
  function decorate(u, c) {
    var ctx = u.ctx, px = uPlot.pxRatio || 1;
    ctx.save();
    (c.shades || []).forEach(function (s) {
      if (s.from == null || s.to == null) return;
      var x0 = Math.max(u.bbox.left, u.valToPos(s.from, "x", true));
      var x1 = Math.min(u.bbox.left + u.bbox.width, u.valToPos(s.to, "x", true));
      if (x1 <= x0) return;
      ctx.fillStyle = palette[s.run % palette.length] + "22";
      ctx.fillRect(x0, u.bbox.top, x1 - x0, u.bbox.height);
      ctx.fillStyle = "#555";
      ctx.font = (11 * px) + "px system-ui, sans-serif";
      ctx.fillText(s.label, x0 + 3 * px, u.bbox.top + 12 * px);
    });
    if (c.x_stages) {
      ctx.strokeStyle = "#999";
      ctx.setLineDash([4 * px, 4 * px]);
      for (var b = 1; b < c.x_stages.length; b++) {
        var bx = u.valToPos(b, "x", true);
        ctx.beginPath();
        ctx.moveTo(bx, u.bbox.top);
        ctx.lineTo(bx, u.bbox.top + u.bbox.height);
        ctx.stroke();
      }
      ctx.setLineDash([]);
    }
    c.series.forEach(function (s) {
      var color = palette[s.run % palette.length];
      ctx.strokeStyle = color;
      ctx.fillStyle = "#222";
      ctx.lineWidth = px;
      ctx.font = "bold " + (12 * px) + "px system-ui, sans-serif";
      for (var i = 0; i < s.x.length; i++) {
        if (s.x[i] == null || s.y[i] == null) continue;
        var x = u.valToPos(s.x[i], "x", true), y = u.valToPos(s.y[i], "y", true);
        if (s.y_lo && s.y_lo[i] != null && s.y_hi[i] != null) {
          var y0 = u.valToPos(s.y_lo[i], "y", true), y1 = u.valToPos(s.y_hi[i], "y", true);
          ctx.beginPath();
          ctx.moveTo(x, y0); ctx.lineTo(x, y1);
          ctx.moveTo(x - 3 * px, y0); ctx.lineTo(x + 3 * px, y0);
          ctx.moveTo(x - 3 * px, y1); ctx.lineTo(x + 3 * px, y1);
          ctx.stroke();
        }
        if (s.x_lo && s.x_lo[i] != null && s.x_hi[i] != null) {
          var x0 = u.valToPos(s.x_lo[i], "x", true), x1 = u.valToPos(s.x_hi[i], "x", true);
          ctx.beginPath();
          ctx.moveTo(x0, y); ctx.lineTo(x1, y);
          ctx.moveTo(x0, y - 3 * px); ctx.lineTo(x0, y + 3 * px);
          ctx.moveTo(x1, y - 3 * px); ctx.lineTo(x1, y + 3 * px);
          ctx.stroke();
        }
        if (s.labels && s.labels[i]) {
          ctx.fillText(s.labels[i], x + 6 * px, y - 6 * px);
        }
      }
    });
    ctx.restore();
  }
  // axisSize is the y axis's width: its longest tick label and the label
  // beside it, so neither is cut.
  function axisSize(u, values, axisIdx, cycleNum) {
    var axis = u.axes[axisIdx];
    if (cycleNum > 1 && axis._size) return axis._size;
    var longest = 0;
    (values || []).forEach(function (v) { longest = Math.max(longest, String(v).length); });
    return Math.ceil(30 + longest * 7.5);
  }
  // padded returns a scale range over the points and their intervals,
  // with 8% of room on each side.
  function padded(c, axis) {
    var lo = Infinity, hi = -Infinity;
    c.series.forEach(function (s) {
      [s[axis], s[axis + "_lo"], s[axis + "_hi"]].forEach(function (vs) {
        (vs || []).forEach(function (v) {
          if (v != null) { lo = Math.min(lo, v); hi = Math.max(hi, v); }
        });
      });
    });
    return function () {
      if (!isFinite(lo)) return [0, 1];
      var pad = (hi - lo) * 0.08 || Math.abs(hi) * 0.1 || 1;
      return [Math.max(lo >= 0 ? 0 : -Infinity, lo - pad), hi + pad];
    };
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
    el.setAttribute("data-x-label", c.x_label || "");
    el.setAttribute("data-y-label", c.y_label || "");
    var width = Math.max(320, Math.min(640, el.clientWidth || 600));
    var xAxis = {label: c.x_label, scale: "x"};
    if (c.x_whole) {
      // Runs are counted: ticks on whole numbers only.
      xAxis.incrs = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000];
    }
    var xScale = {time: false, distr: c.log_x ? 3 : 1};
    if (c.x_stages && c.x_stages.length) {
      // A stage-normalized axis: stage i spans [i, i+1), named at its
      // middle; the boundaries are drawn as dashed lines.
      var n = c.x_stages.length;
      xScale.range = function () { return [0, n]; };
      xAxis.splits = function () { return c.x_stages.map(function (_, i) { return i + 0.5; }); };
      xAxis.values = function (u, splits) { return splits.map(function (v) { return c.x_stages[Math.floor(v)] || ""; }); };
      xAxis.grid = {show: false};
    }
    var yRange = null;
    if (c.series.some(function (s) { return s.labels || s.y_lo || s.x_lo; })) {
      // Room for the intervals and the labels: the axes span them, padded.
      xScale.range = padded(c, "x");
      yRange = padded(c, "y");
    }
    var opts = {
      title: c.title, mode: 2, width: width, height: 300,
      legend: {live: false},
      scales: {x: xScale, y: yRange ? {range: yRange} : {}},
      axes: [xAxis, {label: c.y_label, scale: "y", size: axisSize}],
      series: series,
      hooks: {draw: [function (u) {
        decorate(u, c);
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
        el.setAttribute("data-shades", String((c.shades || []).length));
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
  // For the browser test: the page must not scroll sideways.
  document.body.setAttribute("data-scroll-width", String(document.documentElement.scrollWidth));
  document.body.setAttribute("data-charts-done", String(data.charts.length));
})();
