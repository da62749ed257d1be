"""Tests of engine/tools/."""
