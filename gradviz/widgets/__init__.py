"""The widget layer: one module per widget, each a model plus a few hooks on one base (docs/WIDGETS.md).

`graph_entry` (gv.graph: a tape's `graph_view`, an eg.Graph's `traced_graph_view`),
`tape_view` (gv.tape), `backprop_view` (gv.backprop), `flow_view` (gv.flow), `clipping_lab`
(gv.clipping), `descent_trace` (gv.descent), `gradient_check` (gv.check_gradients), `memory_view`
(gv.memory), `tangent_view` (the guide's example); `view` (the one base: its lifecycle and sync),
`plot_widget` (its matplotlib flavour) and `frames` (the kernel-free front end, frames_view.js) are
what they share; the markup is in gradviz/render; zoom_view.js is the zoom and pan of both front ends
(svg_view.js, frames_view.js).
"""
