// gradviz's front end for graph pictures: an SVG on the left, a details panel on the right.
// A plain ES module for anywidget (no build step); gradviz.widgets.esm.esm_source puts zoom_view.js
// (`zoomable`, `ZOOM_STYLE`) in front of it. Clicking a node or cluster sets `selected`; the panel shows
// `panel` (HTML written by Python, every user string already escaped) followed by `info[selected]`
// (likewise), so clicking works in a static page with no kernel too. A folded graph carries `views`
// (state → SVG) and `opens` (SVG id → state): a click on a folded box or an open group's frame shows
// the state drawn ahead (gradviz.widgets.graph_states) and sets `state`, with or without a kernel.
// Wide graphs stay legible: see zoom_view.js. Colours come from the SVG's own <style> (gradviz.render.theme.themed_graph), which
// follows JupyterLab's theme, and `css` (gradviz.render.theme.widget_css).

const STYLE = `
.gv-root { display: flex; gap: 12px; align-items: flex-start; font-family: var(--jp-ui-font-family, sans-serif);
  font-size: 13px; color: var(--gv-ui-text, var(--jp-ui-font-color1, #1f2328)); }
.gv-main { flex: 1 1 auto; min-width: 0; }
.gv-svg { max-height: var(--gv-max-height, 640px); }
.gv-svg g.node, .gv-svg g.cluster { cursor: pointer; }
.gv-side { flex: 0 0 300px; max-height: var(--gv-max-height, 640px); overflow: auto; padding: 6px 10px;
  border-left: 1px solid var(--gv-ui-border, var(--jp-border-color2, #d0d7de)); }
.gv-side:empty { display: none; }
.gv-side pre { white-space: pre; overflow-x: auto; margin: 2px 0; font-size: 12px; }
.gv-side table { border-collapse: collapse; }
.gv-side td, .gv-side th { padding: 1px 6px 1px 0; vertical-align: top; text-align: left; }
`;

function render({ model, el }) {
  const style = document.createElement("style");
  style.textContent = STYLE + ZOOM_STYLE + (model.get("css") || ""); // + the theme's colours
  const root = document.createElement("div");
  root.className = "gv-root";
  root.dataset.gvWidget = "graph";
  const main = document.createElement("div");
  main.className = "gv-main";
  const pic = document.createElement("div");
  pic.className = "gv-svg";
  pic.dataset.gvOutput = "picture";
  const zoom = zoomable(pic, root);
  main.append(zoom.tools, pic);
  const side = document.createElement("div");
  side.className = "gv-side";
  side.dataset.gvOutput = "panel";
  root.append(main, side);
  el.append(style, root);

  const drawSvg = () => {
    const views = model.get("views") || {};
    const state = model.get("state");
    pic.innerHTML = state && views[state] !== undefined ? views[state] : model.get("svg");
    root.style.setProperty("--gv-max-height", `${model.get("max_height")}px`);
    zoom.draw();
  };
  const drawPanel = () => {
    const info = model.get("info") || {};
    const selected = model.get("selected");
    side.innerHTML = (model.get("panel") || "") + (info[selected] || "");
  };
  pic.addEventListener("click", (event) => {
    if (zoom.wasDrag()) return; // the end of a pan, not a click
    const group = event.target.closest("g.node, g.cluster");
    if (!group || !pic.contains(group)) return;
    const next = (model.get("opens") || {})[group.id];
    if (next !== undefined && (model.get("views") || {})[next] !== undefined) {
      model.set("selected", ""); // a folded box opens, a frame closes: drawn ahead, no kernel needed
      model.set("state", next);
      model.save_changes();
      return;
    }
    model.set("selected", group.id);
    model.save_changes();
    drawPanel();
  });
  model.on("change:svg", drawSvg);
  model.on("change:max_height", drawSvg);
  model.on("change:state", drawSvg);
  model.on("change:panel", drawPanel);
  model.on("change:info", drawPanel);
  model.on("change:selected", drawPanel);
  drawSvg();
  drawPanel();
}

export default { render };
