"""The look shared by every report figure: Agg backend, rcParams, mode colours and labels,
Wilson intervals and saving (one place, so the figures agree)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from impostor_bench.core.modes import MODE_COLOUR, MODE_LABEL  # noqa: E402
from impostor_bench.core.output_files import write_file  # noqa: E402

__all__ = ["DPI", "SAVE_DPI", "VECTOR_FORMATS", "MODE_LABEL", "MODE_COLOR", "IMPOSTOR_COLOR", "MAJORITY_COLOR", "wilson_ci", "save_figure"]

DPI = 130  # on screen
SAVE_DPI = 300  # the PNG beside the vector PDF and SVG (print quality)
VECTOR_FORMATS = ("pdf", "svg")
MODE_COLOR = MODE_COLOUR  # each mode's label and colour are defined once, in impostor_bench.core.modes
IMPOSTOR_COLOR = "#C44E52"
MAJORITY_COLOR = "#4C72B0"

plt.rcParams.update(
    {
        "figure.dpi": DPI,
        "savefig.dpi": SAVE_DPI,
        "pdf.fonttype": 42,  # TrueType in the PDF: text stays editable and searchable
        "svg.fonttype": "none",  # text as text in the SVG
        "font.size": 10,
        "axes.titlesize": 12,
        "axes.titleweight": "bold",
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "grid.linestyle": "-",
    }
)


def wilson_ci(k: np.ndarray, n: np.ndarray, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval (as proportions) for k successes out of n."""
    k = np.asarray(k, float)
    n = np.asarray(n, float)
    from scipy.stats import norm

    z = norm.ppf(1 - alpha / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        den = 1 + z**2 / n
        centre = (p + z**2 / (2 * n)) / den
        half = z * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / den
    return centre - half, centre + half


def save_figure(fig, path: Path) -> None:
    """The PNG at ``path`` (300 dpi) and, for papers, the same figure as vector PDF and SVG beside it.
    The tight box is found once, for the PNG, and reused: ``bbox_inches="tight"`` draws the figure
    once more per file only to measure it (a third of the figures' time)."""
    try:
        write_file(path, lambda p: fig.savefig(p, bbox_inches="tight", facecolor="white", dpi=SAVE_DPI))
        box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(plt.rcParams["savefig.pad_inches"])
        for ext in VECTOR_FORMATS:
            write_file(Path(path).with_suffix(f".{ext}"), lambda p: fig.savefig(p, bbox_inches=box, facecolor="white"))
    finally:
        plt.close(fig)
