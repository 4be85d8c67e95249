"""The science, pure: stdlib, numpy and networkx only (no Qt, no sqlite)."""
