"""Unit tests, one folder per subsystem of engine/; Python only (a test that runs GNU Go is marked
`external`)."""
