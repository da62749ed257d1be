"""Tests of engine/training/."""
