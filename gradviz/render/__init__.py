"""The rendering layer: graph model → DOT → SVG (`dot`, `graphviz`, `svg`, `raster`), matplotlib plots
(`plot`, `descent_plots`), colours (`theme`) and number formatting (`fmt`).
"""
