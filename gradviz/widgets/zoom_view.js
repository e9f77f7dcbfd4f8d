// Zoom and pan for graph pictures, shared by svg_view.js (gv.graph) and frames_view.js (gv.backprop's
// graph): gradviz.widgets.esm.esm_source puts this file in front of theirs (anywidget loads one module).
// A picture starts at the width of its view, but never below a zoom where its text is readable (then
// drag it, or scroll, to pan); − / + (or ctrl + wheel, a pinch) zoom around the pointer, "fit" shows
// it all (never enlarged past 1:1), "1:1" its natural size; a button that would do nothing is
// disabled. The view's root gets data-gv-zoom-level; the buttons data-gv-zoom.

const ZOOM_STYLE = `
.gv-tools { display: flex; gap: 4px; align-items: center; margin-bottom: 4px; font-size: 12px; }
.gv-tools button { font: inherit; color: inherit; background: var(--gv-ui-background, var(--jp-layout-color1, #fff));
  border: 1px solid var(--gv-ui-border, var(--jp-border-color1, #bbb)); border-radius: 3px; padding: 0 7px; cursor: pointer; }
.gv-tools button:disabled { opacity: .45; cursor: default; }
.gv-minimap { position: relative; margin-left: auto; border: 1px solid var(--gv-ui-border, var(--jp-border-color2, #d0d7de));
  background: var(--gv-ui-background, var(--jp-layout-color1, #fff)); cursor: pointer; line-height: 0; }
.gv-minimap[hidden] { display: none; }
.gv-minimap img { display: block; width: 100%; height: 100%; opacity: .85; }
.gv-minimap .gv-minimap-frame { position: absolute; border: 1.5px solid var(--jp-brand-color1, #1976d2);
  background: rgba(25, 118, 210, .08); pointer-events: none; }
.gv-tools .gv-zoom-level { min-width: 3.5em; color: var(--gv-ui-text, var(--jp-ui-font-color1, #1f2328)); opacity: .8; }
.gv-zoomable { overflow: auto; cursor: grab; }
.gv-zoomable.gv-dragging { cursor: grabbing; user-select: none; }
.gv-zoomable svg { display: block; max-width: none !important; }
.gv-zoomable svg g.edge { pointer-events: none; } /* edges take no clicks: never cover a node or frame */
`;
const PT = 4 / 3; // CSS px per pt: Graphviz sizes its pictures in points
const READABLE = 0.75; // the smallest starting zoom: 9 pt labels are 9 CSS px there
const MIN_ZOOM = 0.05;
const MAX_ZOOM = 8;

function naturalSize(svg) {
  const length = (text) => {
    const m = /^([\d.]+)(pt|px)?$/.exec((text || "").trim());
    if (!m) return null;
    return parseFloat(m[1]) * (m[2] === "px" ? 1 : PT);
  };
  let width = length(svg.getAttribute("width"));
  let height = length(svg.getAttribute("height"));
  if (!width || !height) {
    const box = svg.viewBox && svg.viewBox.baseVal;
    width = box && box.width ? box.width * PT : 400;
    height = box && box.height ? box.height * PT : 300;
  }
  return { width, height };
}

function zoomButton(text, action, title) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.title = title;
  b.dataset.gvZoom = action;
  return b;
}

// Make `view` (a scrolling element holding one SVG picture) zoomable; `root` gets data-gv-zoom-level.
// Returns {tools: the toolbar element, draw: call after the SVG inside `view` was replaced,
// wasDrag: whether the last click ended a pan (so it selects nothing)}.
function zoomable(view, root) {
  view.classList.add("gv-zoomable");
  const tools = document.createElement("div");
  tools.className = "gv-tools";
  const level = document.createElement("span");
  level.className = "gv-zoom-level";
  tools.append(zoomButton("−", "out", "zoom out (ctrl + wheel)"), zoomButton("+", "in", "zoom in (ctrl + wheel)"),
    zoomButton("fit", "fit", "show the whole picture"), zoomButton("1:1", "actual", "natural size"), level);
  // The overview: the whole picture small, with a frame around the part in view; a click there
  // brings that part into view. Shown when the picture does not fit (an <img>: no second set of ids).
  const mini = document.createElement("div");
  mini.className = "gv-minimap";
  mini.dataset.gvMinimap = "1";
  mini.title = "the whole picture: click to go there";
  mini.hidden = true;
  const miniImg = document.createElement("img");
  miniImg.alt = "overview";
  const miniFrame = document.createElement("div");
  miniFrame.className = "gv-minimap-frame";
  mini.append(miniImg, miniFrame);
  tools.append(mini);
  let zoom = 1;
  let natural = { width: 0, height: 0 };
  const MINI_WIDTH = 180;
  const miniScale = () => Math.min(MINI_WIDTH / (natural.width || 1), 70 / (natural.height || 1));
  const drawMini = () => {
    const shown = natural.width * zoom, tall = natural.height * zoom;
    const fits = shown <= view.clientWidth + 1 && tall <= view.clientHeight + 1;
    mini.hidden = fits || !natural.width;
    if (mini.hidden) return;
    const k = miniScale();
    mini.style.width = `${natural.width * k}px`;
    mini.style.height = `${natural.height * k}px`;
    const f = k / zoom;
    Object.assign(miniFrame.style, { left: `${view.scrollLeft * f}px`, top: `${view.scrollTop * f}px`,
      width: `${Math.min(view.clientWidth, shown) * f}px`, height: `${Math.min(view.clientHeight, tall) * f}px` });
  };
  mini.addEventListener("click", (event) => {
    const box = mini.getBoundingClientRect();
    const f = zoom / miniScale();
    view.scrollLeft = (event.clientX - box.left) * f - view.clientWidth / 2;
    view.scrollTop = (event.clientY - box.top) * f - view.clientHeight / 2;
    drawMini();
  });
  view.addEventListener("scroll", drawMini, { passive: true });
  let userZoomed = false;
  let dragged = false;
  const svgEl = () => view.querySelector("svg");
  const fitWidth = () => (natural.width ? (view.clientWidth || 800) / natural.width : 1);
  const setZoom = (z, anchor) => {
    const svg = svgEl();
    if (!svg) return;
    z = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, z));
    const ax = anchor ? anchor.x : view.clientWidth / 2;
    const ay = anchor ? anchor.y : view.clientHeight / 2;
    const fx = (view.scrollLeft + ax) / (natural.width * zoom || 1);
    const fy = (view.scrollTop + ay) / (natural.height * zoom || 1);
    zoom = z;
    svg.style.width = `${natural.width * zoom}px`;
    svg.style.height = `${natural.height * zoom}px`;
    view.scrollLeft = fx * natural.width * zoom - ax;
    view.scrollTop = fy * natural.height * zoom - ay;
    root.dataset.gvZoomLevel = zoom.toFixed(3);
    level.textContent = `${Math.round(zoom * 100)}%`;
    refreshTools();
  };
  // Once per frame, after the picture answered: a button that would do nothing now is disabled, and
  // the overview's frame follows the view (kept out of a control's or a click's answer time).
  let toolsPending = false;
  const refreshTools = () => {
    if (toolsPending) return;
    toolsPending = true;
    requestAnimationFrame(() => {
      toolsPending = false;
      const idle = { in: zoom >= MAX_ZOOM, out: zoom <= MIN_ZOOM, fit: Math.abs(zoom - fitZoom()) < 0.005,
        actual: Math.abs(zoom - 1) < 0.005 };
      for (const b of tools.querySelectorAll("button[data-gv-zoom]")) b.disabled = idle[b.dataset.gvZoom];
      drawMini();
    });
  };
  // "fit": the whole picture in view, never enlarged past its natural size
  const fitZoom = () => Math.min(1, fitWidth(), (view.clientHeight || 640) / (natural.height || 1));
  const startZoom = () => Math.min(1, Math.max(fitWidth(), READABLE));
  const draw = () => {
    const svg = svgEl();
    if (!svg) return;
    if (!svg.dataset.gvNatural) {
      natural = naturalSize(svg);
      setTimeout(() => { // after the picture shows: the overview never delays a click's answer
        miniImg.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg.outerHTML)}`;
      }, 0);
      svg.dataset.gvNatural = `${natural.width},${natural.height}`;
      svg.removeAttribute("width");
      svg.removeAttribute("height");
      if (!svg.getAttribute("preserveAspectRatio")) svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    }
    setZoom(userZoomed ? zoom : startZoom());
  };
  tools.addEventListener("click", (event) => {
    const action = event.target.closest("button")?.dataset.gvZoom;
    if (!action) return;
    userZoomed = true;
    if (action === "in") setZoom(zoom * 1.25);
    else if (action === "out") setZoom(zoom / 1.25);
    else if (action === "fit") setZoom(fitZoom());
    else setZoom(1);
  });
  view.addEventListener("wheel", (event) => {
    if (!event.ctrlKey && !event.metaKey) return; // a plain wheel scrolls the page / the picture
    event.preventDefault();
    userZoomed = true;
    const box = view.getBoundingClientRect();
    setZoom(zoom * Math.exp(-event.deltaY * 0.002), { x: event.clientX - box.left, y: event.clientY - box.top });
  }, { passive: false });
  let drag = null;
  view.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    dragged = false;
    drag = { x: event.clientX, y: event.clientY, left: view.scrollLeft, top: view.scrollTop, moved: false };
  });
  window.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    drag.moved = true;
    view.classList.add("gv-dragging");
    view.scrollLeft = drag.left - dx;
    view.scrollTop = drag.top - dy;
  });
  window.addEventListener("pointerup", () => {
    if (!drag) return;
    dragged = drag.moved;
    drag = null;
    view.classList.remove("gv-dragging");
  });
  // The output area may have no width yet when the widget is first drawn: size it once it has one.
  if (typeof ResizeObserver !== "undefined") {
    new ResizeObserver(() => { if (view.clientWidth > 0 && !userZoomed) setZoom(startZoom()); }).observe(view);
  }
  return { tools, draw, wasDrag: () => { const d = dragged; dragged = false; return d; } };
}
