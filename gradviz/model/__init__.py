"""The model layer: what gradviz builds from tapes, optimizers and recorders, independent of drawing.

Graph models (`graph_model`, `fold`), the tapes' public state (`tapeinfo`), why a gradient is None
(`explain`), optimizer runs (`descent_runs`) and the box the descent trace draws them in
(`descent_scene`), clipping results (`clip_results`), gradient-flow statistics (`flow_stats`), the
gradient along each graph edge (`edge_flow`) and `RecordedSteps` (what `gv.Recorder` records).
"""
