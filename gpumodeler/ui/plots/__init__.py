"""Plots of predictions (pyqtgraph): built once, updated with setData."""
