// Drag-to-zoom on the service page's time charts: dragging across a chart
// opens the same page with from and to set to the times dragged over. The
// charts carry their range (data-from, data-to, in Unix milliseconds) and
// where their plot starts and ends (data-x0, data-x1, fractions of their
// width). Without this script the page's range links do the same.
"use strict";
(function () {
  const minPixels = 4;

  function timeAt(svg, clientX) {
    const box = svg.getBoundingClientRect();
    const from = Number(svg.dataset.from), to = Number(svg.dataset.to);
    const x0 = Number(svg.dataset.x0), x1 = Number(svg.dataset.x1);
    let f = ((clientX - box.left) / box.width - x0) / (x1 - x0);
    f = Math.min(1, Math.max(0, f));
    return from + f * (to - from);
  }

  function zoomTo(a, b) {
    const url = new URL(window.location.href);
    const lo = new Date(Math.floor(Math.min(a, b) / 1000) * 1000);
    const hi = new Date(Math.ceil(Math.max(a, b) / 1000) * 1000);
    url.searchParams.set("from", lo.toISOString().replace(".000Z", "Z"));
    url.searchParams.set("to", hi.toISOString().replace(".000Z", "Z"));
    url.hash = "";
    window.location.assign(url.toString());
  }

  function attach(svg) {
    const fig = svg.parentElement;
    let startX = null;
    let band = null;
    svg.addEventListener("pointerdown", (e) => {
      startX = e.clientX;
      svg.setPointerCapture(e.pointerId);
      band = document.createElement("div");
      band.className = "zoom-band";
      fig.appendChild(band);
      e.preventDefault();
    });
    svg.addEventListener("pointermove", (e) => {
      if (startX === null) return;
      const box = svg.getBoundingClientRect(), figBox = fig.getBoundingClientRect();
      const left = Math.min(startX, e.clientX), right = Math.max(startX, e.clientX);
      band.style.left = (left - figBox.left) + "px";
      band.style.width = (right - left) + "px";
      band.style.top = (box.top - figBox.top) + "px";
      band.style.height = box.height + "px";
    });
    const end = (e, apply) => {
      if (startX === null) return;
      const x = startX;
      startX = null;
      band.remove();
      band = null;
      if (apply && Math.abs(e.clientX - x) >= minPixels) {
        zoomTo(timeAt(svg, x), timeAt(svg, e.clientX));
      }
    };
    svg.addEventListener("pointerup", (e) => end(e, true));
    svg.addEventListener("pointercancel", (e) => end(e, false));
  }

  document.querySelectorAll("svg.zoom").forEach(attach);
  document.documentElement.classList.add("zoomable");
})();
