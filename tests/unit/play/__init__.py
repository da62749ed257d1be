"""Tests of engine/play/."""
