"""Tests of engine/gtp/."""
