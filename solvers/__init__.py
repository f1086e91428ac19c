"""solvers package of impostor-bench."""
