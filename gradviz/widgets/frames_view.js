// gradviz's kernel-free front end: controls that switch between frames computed in Python.
// A plain ES module for anywidget (no build step); gradviz.widgets.esm.esm_source puts zoom_view.js in
// front of it (a graph picture zooms and pans). The model holds everything the controls explore:
//   controls: [{name, kind: "slider"|"dropdown"|"checkbox", label, labels, play, note}]
//   index:    {control name: the chosen position} (synced back to Python when a kernel is there)
//   picture:  an SVG (or HTML) whose <g data-gv-layer="NAME"> groups the layers fill
//   layers:   [{name, type: "svg"|"html"|"trace"|"rows", deps: [control names], frames: {key: content},
//               reveal: control name (trace: how many points to show; rows: which rows)}]
//   "patch" layers restyle elements of the picture by id: {id: {shapes: {attr: value},
//               texts: {text shown: {attr: value, text: new text}}}} (gradviz.svg.restyle's arguments)
//   info:     {SVG element id: HTML} shown under the picture when that node / cluster is clicked
// A layer's key is its deps' positions joined by ",". Every user string was escaped in Python.
// Moving a control only looks up frames: it works in a live lab with no kernel round trip, and in an
// exported static page.

const STYLE = `
.gvf-root { font-family: var(--jp-ui-font-family, sans-serif); font-size: 13px;
  color: var(--gv-ui-text, var(--jp-ui-font-color1, #1f2328)); }
.gvf-title { font-weight: 600; margin: 2px 0 6px; }
.gvf-controls { display: flex; flex-wrap: wrap; gap: 6px 16px; align-items: center; margin-bottom: 6px; }
.gvf-control { display: inline-flex; gap: 6px; align-items: center; }
.gvf-control input[type=range] { width: 180px; }
.gvf-value { min-width: 4em; font-variant-numeric: tabular-nums; color: var(--gv-ui-muted, var(--jp-ui-font-color2, #57606a)); }
.gvf-control select, .gvf-control button { font: inherit; color: inherit;
  background: var(--gv-ui-background, var(--jp-layout-color1, #fff)); border: 1px solid var(--gv-ui-border, var(--jp-border-color1, #bbb));
  border-radius: 3px; padding: 1px 6px; }
.gvf-picture svg { max-width: 100%; height: auto; display: block; }
.gvf-picture.gv-zoomable { max-height: 640px; }
.gvf-panel { margin-top: 4px; }
.gvf-details:empty { display: none; }
.gvf-details { margin-top: 4px; padding-top: 4px; border-top: 1px solid var(--gv-ui-border, var(--jp-border-color2, #d0d7de)); }
.gvf-details pre { white-space: pre; overflow-x: auto; font-size: 12px; }
.gvf-picture g.node, .gvf-picture g.cluster { cursor: pointer; }
.gvf-panel table { border-collapse: collapse; }
.gvf-panel td, .gvf-panel th { padding: 1px 8px 1px 0; text-align: left; vertical-align: top; }
.gvf-note { font-size: 11px; color: var(--gv-ui-muted, var(--jp-ui-font-color2, #57606a)); }
`;

const SVG_NS = "http://www.w3.org/2000/svg";

function layerKey(layer, index) {
  return (layer.deps || []).map((name) => index[name] ?? 0).join(",");
}

function svgEl(name, attrs, style) {
  const el = document.createElementNS(SVG_NS, name);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  Object.assign(el.style, style || {}); // colours by style: they may be CSS variables
  return el;
}

// A trace: a polyline in the picture's coordinates, its first points shown (counts[position], or
// position + 1; all without a reveal control), a dot on the last one; optionally the whole path
// faded (ghost), a dot on every point (marker), a dashed segment at the last point (segments),
// clipped to a box (clip: [x, y, width, height]).
function drawTrace(group, trace, position) {
  group.replaceChildren();
  if (!trace || !trace.points || trace.points.length === 0) return;
  const all = trace.points;
  let count = all.length;
  if (position !== null) {
    count = trace.counts ? trace.counts[Math.min(position, trace.counts.length - 1)] : position + 1;
  }
  const pts = all.slice(0, Math.max(1, count));
  const color = trace.color || "currentColor";
  let target = group;
  if (trace.clip) {
    const [x, y, w, h] = trace.clip;
    target = svgEl("svg", { x, y, width: w, height: h, viewBox: `${x} ${y} ${w} ${h}`, overflow: "hidden" });
    group.append(target);
  }
  const line = (points, width, opacity) => svgEl("polyline", {
    points: points.map((p) => `${p[0]},${p[1]}`).join(" "), fill: "none", "stroke-width": width,
    "stroke-linejoin": "round", "stroke-opacity": opacity ?? 1,
  }, { stroke: color });
  if (trace.ghost) target.append(line(all, trace.ghost_width || 1, trace.ghost));
  target.append(line(pts, trace.width || 1.8, trace.opacity));
  if (trace.marker) { // one path of small circles (not an element per point: a move stays cheap)
    const r = trace.marker;
    const d = pts.map((p) => `M${p[0] - r},${p[1]}a${r},${r} 0 1,0 ${2 * r},0a${r},${r} 0 1,0 ${-2 * r},0`);
    target.append(svgEl("path", { d: d.join("") }, { fill: color }));
  }
  const segment = trace.segments ? trace.segments[pts.length - 1] : null;
  if (segment) {
    const [x1, y1, x2, y2] = segment;
    target.append(svgEl("line", { x1, y1, x2, y2, "stroke-width": trace.segment_width || 1.6,
      "stroke-dasharray": trace.dash || "5,2.5" }, { stroke: trace.segment_color || color }));
  }
  const radius = trace.radius ?? 3.5;
  if (radius > 0) {
    const last = pts[pts.length - 1];
    const halo = trace.halo ? { stroke: trace.halo } : {};
    target.append(svgEl("circle", { cx: last[0], cy: last[1], r: radius,
      "stroke-width": trace.halo ? 1.5 : 0 }, { fill: color, ...halo }));
  }
}

// A "rows" frame: head, the rows position - window + 1 .. position (each row's cells after the lead
// cells), tail; the last row shown is class "now" when several are. (gradviz.widgets.frames.rows_html)
function rowsHtml(content, position) {
  if (!content) return "";
  if (typeof content === "string") return content;
  const rows = content.rows || [];
  const window = content.window || 1;
  const last = Math.max(0, Math.min(position, rows.length - 1));
  const shown = rows.slice(Math.max(0, last + 1 - window), last + 1);
  const lead = content.lead || [];
  const body = shown.map((cells, j) => {
    const now = window > 1 && j === shown.length - 1 ? ' class="now"' : "";
    return `<tr${now}>${lead.concat(cells).map((c) => `<td>${c}</td>`).join("")}</tr>`;
  });
  return (content.head || "") + body.join("") + (content.tail || "");
}

const SHAPES = "polygon, ellipse, path, polyline";
const norm = (text) => text.split(/\s+/).filter(Boolean).join(" ");

function applyPatch(root, patch, saved) {
  for (const [id, original] of saved) { // undo the last frame's patches
    const el = root.querySelector(`[id="${CSS.escape(id)}"]`);
    if (el) el.replaceWith(original.cloneNode(true));
  }
  saved.clear();
  for (const [id, change] of Object.entries(patch || {})) {
    const el = root.querySelector(`[id="${CSS.escape(id)}"]`);
    if (!el) continue;
    saved.set(id, el.cloneNode(true));
    const outline = { ...(change.shapes || {}) };
    const textFill = outline["text-fill"];
    delete outline["text-fill"];
    for (const shape of el.querySelectorAll(SHAPES)) {
      for (const [attr, value] of Object.entries(outline)) {
        if (attr === "fill" && (shape.getAttribute("fill") === "none" || !shape.hasAttribute("fill"))) continue;
        shape.setAttribute(attr, value);
      }
    }
    const texts = Object.fromEntries(Object.entries(change.texts || {}).map(([k, v]) => [norm(k), v]));
    for (const text of el.querySelectorAll("text")) {
      if (textFill) text.setAttribute("fill", textFill);
      const style = texts[norm(text.textContent)];
      if (!style) continue;
      for (const [attr, value] of Object.entries(style)) {
        if (attr === "text") text.textContent = value;
        else text.setAttribute(attr, value);
      }
    }
  }
}

function makeControl(spec, get, set) {
  const box = document.createElement("label");
  box.className = "gvf-control";
  box.dataset.gvControl = spec.name;
  const caption = document.createElement("span");
  caption.textContent = spec.label ?? spec.name;
  const labels = spec.labels || [];
  let input;
  let value = null;
  let refresh;
  if (spec.kind === "dropdown") {
    input = document.createElement("select");
    labels.forEach((text, k) => {
      const option = document.createElement("option");
      option.value = String(k);
      option.textContent = text;
      input.append(option);
    });
    input.addEventListener("change", () => set(Number(input.value)));
    refresh = () => { input.value = String(get()); };
    box.append(caption, input);
  } else if (spec.kind === "checkbox") {
    input = document.createElement("input");
    input.type = "checkbox";
    input.addEventListener("change", () => set(input.checked ? 1 : 0));
    refresh = () => { input.checked = get() === 1; };
    box.append(input, caption);
  } else {
    input = document.createElement("input");
    input.type = "range";
    input.min = "0";
    input.max = String(Math.max(0, labels.length - 1));
    input.step = "1";
    value = document.createElement("span");
    value.className = "gvf-value";
    let stopPlay = () => {}; // a hand on the slider (or ‹ ›) stops ▶
    input.addEventListener("input", () => { stopPlay(); set(Number(input.value)); });
    refresh = () => {
      input.value = String(get());
      value.textContent = labels[get()] ?? String(get());
    };
    box.append(caption, input, value);
    if (spec.play) {
      const play = document.createElement("button");
      play.type = "button";
      play.dataset.gvControl = `${spec.name}:play`;
      play.textContent = "▶";
      let timer = null;
      const stop = () => { clearInterval(timer); timer = null; play.textContent = "▶"; };
      stopPlay = () => { if (timer) stop(); };
      play.addEventListener("click", (event) => {
        event.preventDefault();
        if (timer) return stop();
        if (get() >= labels.length - 1) set(0);
        play.textContent = "❚❚";
        timer = setInterval(() => {
          if (get() >= labels.length - 1) return stop();
          set(get() + 1);
          if (get() >= labels.length - 1) stop(); // at the end: stopped now, not one tick later
        }, spec.interval_ms || 400);
      });
      for (const [text, step] of [["‹", -1], ["›", 1]]) {
        const b = document.createElement("button");
        b.type = "button";
        b.dataset.gvControl = `${spec.name}:${step < 0 ? "prev" : "next"}`;
        b.textContent = text;
        b.addEventListener("click", (event) => {
          event.preventDefault();
          stopPlay();
          set(Math.min(labels.length - 1, Math.max(0, get() + step)));
        });
        box.append(b);
      }
      box.append(play);
    }
  }
  input.dataset.gvInput = spec.name;
  if (spec.note) box.title = spec.note;
  return { box, refresh };
}

function render({ model, el }) {
  const style = document.createElement("style");
  style.textContent = STYLE + ZOOM_STYLE + (model.get("css") || ""); // + the theme's colours
  const root = document.createElement("div");
  root.className = "gvf-root gradviz";
  root.dataset.gvWidget = model.get("kind") || "frames";
  const title = document.createElement("div");
  title.className = "gvf-title";
  const bar = document.createElement("div");
  bar.className = "gvf-controls";
  const picture = document.createElement("div");
  picture.className = "gvf-picture";
  picture.dataset.gvOutput = "picture";
  const panel = document.createElement("div");
  panel.className = "gvf-panel";
  panel.dataset.gvOutput = "panel";
  const details = document.createElement("div");
  details.className = "gvf-details";
  details.dataset.gvOutput = "details";
  const note = document.createElement("div");
  note.className = "gvf-note";
  root.append(title, bar, picture, panel, details, note);
  let zoom = null; // a graph picture zooms and pans (zoom_view.js); a plot fits the width
  picture.addEventListener("click", (event) => {
    if (zoom && zoom.wasDrag()) return; // the end of a pan, not a click
    const group = event.target.closest("g.node, g.cluster");
    const info = model.get("info") || {};
    if (!group || !picture.contains(group) || !(group.id in info)) return;
    details.innerHTML = info[group.id];
  });
  el.append(style, root);

  const index = () => model.get("index") || {};
  const set = (name, k) => {
    if (index()[name] === k) return;
    model.set("index", { ...index(), [name]: k });
    model.save_changes();
    update();
  };
  let refreshers = [];
  let patched = new Map(); // patch layer → {element id: its original, to restore}
  let shownKeys = new Map(); // layer element → the key of the frame it shows (skip unchanged layers)
  let shownPanel = null; // the panel's HTML now

  const build = () => {
    title.textContent = model.get("title") || "";
    title.style.display = title.textContent ? "" : "none";
    note.textContent = model.get("note") || "";
    bar.replaceChildren();
    refreshers = [];
    for (const spec of model.get("controls") || []) {
      const c = makeControl(spec, () => index()[spec.name] ?? 0, (k) => set(spec.name, k));
      bar.append(c.box);
      refreshers.push(c.refresh);
    }
    picture.innerHTML = model.get("picture") || "";
    if (picture.querySelector("svg g.node")) {
      if (!zoom) {
        zoom = zoomable(picture, root);
        root.insertBefore(zoom.tools, picture);
      }
      zoom.draw();
    }
    shownKeys = new Map();
    shownPanel = null;
    patched = new Map();
    update();
  };

  const update = () => {
    const idx = index();
    refreshers.forEach((r) => r());
    const html = [];
    for (const layer of model.get("layers") || []) {
      const content = layer.frames?.[layerKey(layer, idx)];
      if (layer.type === "html") {
        html.push(content || "");
        continue;
      }
      if (layer.type === "rows") {
        html.push(rowsHtml(content, idx[layer.reveal] ?? 0));
        continue;
      }
      const group = picture.querySelector(`[data-gv-layer="${layer.name}"]`);
      if (!group) continue;
      const key = `${layerKey(layer, idx)}|${layer.reveal ? idx[layer.reveal] : ""}`;
      if (shownKeys.get(group) === key) continue;
      shownKeys.set(group, key);
      if (layer.type === "patch") {
        if (!patched.has(layer.name)) patched.set(layer.name, new Map());
        applyPatch(group, content, patched.get(layer.name));
      } else if (layer.type === "trace") {
        drawTrace(group, content, layer.reveal ? (idx[layer.reveal] ?? 0) : null);
      } else {
        group.innerHTML = content || "";
      }
    }
    const text = html.join("");
    if (text !== shownPanel) { // an unchanged panel is left alone (no new layout)
      shownPanel = text;
      panel.innerHTML = text;
    }
  };

  model.on("change:index", update);
  for (const name of ["controls", "picture", "layers", "title", "note", "info"]) model.on(`change:${name}`, build);
  build();
}

export default { render };
