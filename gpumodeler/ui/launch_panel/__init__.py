"""Launch panel: one kernel launch on one GPU, its prediction and its sweeps."""
