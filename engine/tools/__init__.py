"""Programs that drive GTP engines from outside: `kosumi-match` (match.py), the GTP client for
engine subprocesses (gtp_client.py), and argparse value types shared by the command lines (cli.py).

Standalone except for one thing: match.py scores a finished game with kosumi's dead-stone
classifier (engine.scoring.csa, over engine.rules' board) when there is no referee and the engines
do not agree on dead stones, so tools may import engine.scoring and engine.rules (both below every
layer that imports tools). Nothing else of the engine; any layer above scoring may use it."""
