// gradviz's front end for graph pictures: an SVG on the left, a details panel on the right.
// A plain ES module for anywidget (no build step). Clicking a node or cluster sets `selected`;
// the panel shows `panel` (HTML written by Python, every user string already escaped) followed by
// `info[selected]` (likewise), so clicking works in a static page with no kernel too.
// Wide graphs stay legible: the picture starts at the width of the view, but never smaller than a
// zoom where its text is readable (then drag it, or scroll, to pan); − / + (or ctrl + wheel, a
// pinch) zoom around the pointer, "fit" shows it all, "1:1" its natural size. Colours come from the
// SVG's own <style> (gradviz.render.theme.themed_graph), which follows JupyterLab's theme.

const STYLE = `
.gv-root { display: flex; gap: 12px; align-items: flex-start; font-family: var(--jp-ui-font-family, sans-serif);
  font-size: 13px; color: var(--jp-ui-font-color1, #1f2328); }
.gv-main { flex: 1 1 auto; min-width: 0; }
.gv-tools { display: flex; gap: 4px; align-items: center; margin-bottom: 4px; font-size: 12px; }
.gv-tools button { font: inherit; color: inherit; background: var(--jp-layout-color1, #fff);
  border: 1px solid var(--jp-border-color1, #bbb); border-radius: 3px; padding: 0 7px; cursor: pointer; }
.gv-tools .gv-zoom-level { min-width: 3.5em; color: var(--jp-ui-font-color1, #1f2328); opacity: .8; }
.gv-svg { overflow: auto; max-height: var(--gv-max-height, 640px); cursor: grab; }
.gv-svg.gv-dragging { cursor: grabbing; user-select: none; }
.gv-svg svg { display: block; max-width: none; }
.gv-svg g.node, .gv-svg g.cluster { cursor: pointer; }
.gv-side { flex: 0 0 300px; max-height: var(--gv-max-height, 640px); overflow: auto; padding: 6px 10px;
  border-left: 1px solid var(--jp-border-color2, #d0d7de); }
.gv-side:empty { display: none; }
.gv-side pre { white-space: pre; overflow-x: auto; margin: 2px 0; font-size: 12px; }
.gv-side table { border-collapse: collapse; }
.gv-side td, .gv-side th { padding: 1px 6px 1px 0; vertical-align: top; text-align: left; }
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

function button(text, action, title) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.title = title;
  b.dataset.gvZoom = action;
  return b;
}

function render({ model, el }) {
  const style = document.createElement("style");
  style.textContent = STYLE + (model.get("css") || ""); // the theme's colours (gradviz.render.theme)
  const root = document.createElement("div");
  root.className = "gv-root";
  root.dataset.gvWidget = "graph";
  const main = document.createElement("div");
  main.className = "gv-main";
  const tools = document.createElement("div");
  tools.className = "gv-tools";
  const level = document.createElement("span");
  level.className = "gv-zoom-level";
  tools.append(button("−", "out", "zoom out (ctrl + wheel)"), button("+", "in", "zoom in (ctrl + wheel)"),
    button("fit", "fit", "show the whole graph"), button("1:1", "actual", "natural size"), level);
  const pic = document.createElement("div");
  pic.className = "gv-svg";
  pic.dataset.gvOutput = "picture";
  main.append(tools, pic);
  const side = document.createElement("div");
  side.className = "gv-side";
  side.dataset.gvOutput = "panel";
  root.append(main, side);
  el.append(style, root);

  let zoom = 1;
  let natural = { width: 0, height: 0 };
  let userZoomed = false;

  const svgEl = () => pic.querySelector("svg");
  const fitZoom = () => {
    const room = pic.clientWidth || el.clientWidth || 800;
    return natural.width ? room / natural.width : 1;
  };
  const setZoom = (z, anchor) => {
    const svg = svgEl();
    if (!svg) return;
    z = Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, z));
    const ax = anchor ? anchor.x : pic.clientWidth / 2;
    const ay = anchor ? anchor.y : pic.clientHeight / 2;
    const fx = (pic.scrollLeft + ax) / (natural.width * zoom || 1);
    const fy = (pic.scrollTop + ay) / (natural.height * zoom || 1);
    zoom = z;
    svg.style.width = `${natural.width * zoom}px`;
    svg.style.height = `${natural.height * zoom}px`;
    pic.scrollLeft = fx * natural.width * zoom - ax;
    pic.scrollTop = fy * natural.height * zoom - ay;
    root.dataset.gvZoomLevel = zoom.toFixed(3);
    level.textContent = `${Math.round(zoom * 100)}%`;
  };
  const startZoom = () => Math.min(1, Math.max(fitZoom(), READABLE));

  const drawSvg = () => {
    pic.innerHTML = model.get("svg");
    root.style.setProperty("--gv-max-height", `${model.get("max_height")}px`);
    const svg = svgEl();
    if (!svg) return;
    natural = naturalSize(svg);
    svg.removeAttribute("width");
    svg.removeAttribute("height");
    if (!svg.getAttribute("preserveAspectRatio")) svg.setAttribute("preserveAspectRatio", "xMinYMin meet");
    setZoom(userZoomed ? zoom : startZoom());
  };
  const drawPanel = () => {
    const info = model.get("info") || {};
    const selected = model.get("selected");
    side.innerHTML = (model.get("panel") || "") + (info[selected] || "");
  };

  tools.addEventListener("click", (event) => {
    const action = event.target.closest("button")?.dataset.gvZoom;
    if (!action) return;
    userZoomed = true;
    if (action === "in") setZoom(zoom * 1.25);
    else if (action === "out") setZoom(zoom / 1.25);
    else if (action === "fit") setZoom(Math.min(fitZoom(), (pic.clientHeight || 640) / (natural.height || 1)));
    else setZoom(1);
  });
  pic.addEventListener("wheel", (event) => {
    if (!event.ctrlKey && !event.metaKey) return; // a plain wheel scrolls the page / the picture
    event.preventDefault();
    userZoomed = true;
    const box = pic.getBoundingClientRect();
    setZoom(zoom * Math.exp(-event.deltaY * 0.002), { x: event.clientX - box.left, y: event.clientY - box.top });
  }, { passive: false });

  let drag = null; // {x, y, left, top, moved}
  let dragged = false;
  pic.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    drag = { x: event.clientX, y: event.clientY, left: pic.scrollLeft, top: pic.scrollTop, moved: false };
  });
  window.addEventListener("pointermove", (event) => {
    if (!drag) return;
    const dx = event.clientX - drag.x;
    const dy = event.clientY - drag.y;
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    drag.moved = true;
    pic.classList.add("gv-dragging");
    pic.scrollLeft = drag.left - dx;
    pic.scrollTop = drag.top - dy;
  });
  window.addEventListener("pointerup", () => {
    if (!drag) return;
    dragged = drag.moved;
    drag = null;
    pic.classList.remove("gv-dragging");
  });

  pic.addEventListener("click", (event) => {
    if (dragged) { dragged = false; return; } // the end of a pan, not a click
    const group = event.target.closest("g.node, g.cluster");
    if (!group || !pic.contains(group)) return;
    model.set("selected", group.id);
    model.save_changes();
    drawPanel();
  });
  model.on("change:svg", drawSvg);
  model.on("change:max_height", drawSvg);
  model.on("change:panel", drawPanel);
  model.on("change:info", drawPanel);
  model.on("change:selected", drawPanel);
  drawSvg();
  drawPanel();
  // The output area may have no width yet when the widget is first drawn: size it once it has one.
  if (typeof ResizeObserver !== "undefined") {
    const seen = new ResizeObserver(() => {
      if (pic.clientWidth > 0 && !userZoomed) setZoom(startZoom());
    });
    seen.observe(pic);
  }
}

export default { render };
