"""tasks package of impostor-bench."""
