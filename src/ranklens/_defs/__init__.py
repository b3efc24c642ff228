"""Layer 2, the definitions: conventions and their presets, the measure registry, measure names (ours,
trec_eval's, ir_measures'). Data, no arithmetic."""
