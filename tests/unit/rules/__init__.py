"""Tests of engine/rules/."""
