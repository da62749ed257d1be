"""kosumi with programs from outside Python: GNU Go, Lizzie under Xvfb, Sabaki's GTP library
under node, a local Ray cluster. Every test here is marked `external` (tests/conftest.py) and
skips, saying why, when its program is missing."""
