"""The widget layer: one module per widget, each a thin view over the model and the renderers.

`graph_entry` (gv.graph: a tape's `graph_view`, an eg.Graph's `traced_view`),
`tape_inspector` (gv.tape), `stepper` (gv.backprop), `flow_view` (gv.flow), `clipping_lab`
(gv.clipping), `descent_trace` (gv.descent), `gradient_check` (gv.check_gradients); `base`,
`plot_widget`, `frames` (the kernel-free front end, frames_view.js) and `static_state` (the picture
carried once, in the widget's state) are what they share; zoom_view.js is the zoom and pan of both
front ends (svg_view.js, frames_view.js).
"""
