"""Tests of engine/tactics/."""
