"""Tests of engine/scoring/."""
