"""scorers package of impostor-bench."""
