"""kosumi: a Go engine with a learned evaluation (see README.md for the map of the files)."""

__version__ = "0.1.0"
