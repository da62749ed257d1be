"""Tests of engine/search/."""
