"""Tests of the scripts in benchmarks/."""
