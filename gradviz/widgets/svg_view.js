// gradviz's front end for graph pictures: an SVG on the left, a details panel on the right.
// A plain ES module for anywidget (no build step). Clicking a node or cluster sets `selected`;
// the panel shows `panel` (HTML written by Python, every user string already escaped) followed by
// `info[selected]` (likewise), so clicking works in a static page with no kernel too.

const STYLE = `
.gv-root { display: flex; gap: 12px; align-items: flex-start; font-family: var(--jp-ui-font-family, sans-serif);
  font-size: 13px; color: var(--jp-ui-font-color1, inherit); }
.gv-svg { flex: 1 1 auto; min-width: 0; overflow: auto; max-height: var(--gv-max-height, 640px); }
.gv-svg svg { max-width: 100%; height: auto; }
.gv-svg g.node, .gv-svg g.cluster { cursor: pointer; }
.gv-side { flex: 0 0 300px; max-height: var(--gv-max-height, 640px); overflow: auto; padding: 6px 10px;
  border-left: 1px solid var(--jp-border-color2, #d0d7de); }
.gv-side:empty { display: none; }
.gv-side pre { white-space: pre; overflow-x: auto; margin: 2px 0; font-size: 12px; }
.gv-side table { border-collapse: collapse; }
.gv-side td, .gv-side th { padding: 1px 6px 1px 0; vertical-align: top; text-align: left; }
`;

function isDark() {
  const light = document.body && document.body.dataset ? document.body.dataset.jpThemeLight : undefined;
  return light === "false";
}

function render({ model, el }) {
  const style = document.createElement("style");
  style.textContent = STYLE;
  const root = document.createElement("div");
  root.className = "gv-root";
  const pic = document.createElement("div");
  pic.className = "gv-svg";
  const side = document.createElement("div");
  side.className = "gv-side";
  root.append(pic, side);
  el.append(style, root);

  const drawSvg = () => {
    pic.innerHTML = model.get("svg");
    root.style.setProperty("--gv-max-height", `${model.get("max_height")}px`);
  };
  const drawPanel = () => {
    const info = model.get("info") || {};
    const selected = model.get("selected");
    side.innerHTML = (model.get("panel") || "") + (info[selected] || "");
  };
  pic.addEventListener("click", (event) => {
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

  if (model.get("theme_mode") === "auto" && isDark() !== model.get("page_dark")) {
    model.set("page_dark", isDark());
    model.save_changes();
  }
}

export default { render };
