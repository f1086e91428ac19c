"""analysis package of impostor-bench."""
