"""The view model built from a Report: the summary, the compiles' stages, recompiles, guards, kernels and speed facts."""
