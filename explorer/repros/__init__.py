"""Runnable repros: a compile's graph as torch's ``fx_graph_runnable``, a graph break's starting point."""
