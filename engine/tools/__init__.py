"""Programs that drive GTP engines from outside: `kosumi-match` (match.py), the GTP client for
engine subprocesses (gtp_client.py), and argparse value types shared by the command lines (cli.py).

Standalone: imports nothing of the engine but engine.tools; any layer may use it."""
