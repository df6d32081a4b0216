"""dpbandits: differentially private bandit and online-learning algorithms.

A Rust core (``dpbandits._core``) does the arithmetic; this package validates
input, makes every privacy decision (``dpbandits.privacy``) and assembles
learners. See README.md for the two commands that run the main job and the
tests.
"""

from __future__ import annotations

from dpbandits import errors, mechanisms
from dpbandits._core import __version__

__all__ = ["__version__", "errors", "mechanisms"]
