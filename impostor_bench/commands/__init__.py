"""Subcommands of the impostor CLI, one module each."""
