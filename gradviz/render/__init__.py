"""The rendering layer: graph model → DOT → SVG (`dot`, `graphviz`, `svg`, `raster`), matplotlib plots
(`plot`, `descent_plots`, `memory_plots`), colours (`theme`), number formatting (`fmt`), and every
widget's HTML as functions of plain data (`html`, `graph_info`, `tape_panels`, `backprop_panels`,
`plot_panels`, `descent_panels`, `static_state`).
"""
