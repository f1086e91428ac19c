"""Entry point module for Inspect: importing it registers our model providers."""
