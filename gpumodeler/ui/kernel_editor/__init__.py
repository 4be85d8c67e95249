"""Kernel execution graph editor (instructions, latency edges, loops, live latency bound)."""
