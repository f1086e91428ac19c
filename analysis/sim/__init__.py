"""Synthetic games with known effects, and the power of a planned design.

``design`` holds the study design and true effects, ``ballots`` the ballot profiles,
``simulate`` draws games in the data-contract format, ``power`` plans the design's size.
"""
