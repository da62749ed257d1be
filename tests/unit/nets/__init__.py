"""Tests of engine/nets/."""
