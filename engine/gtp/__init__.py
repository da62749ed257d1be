"""The GTP front end: the command registry, argument types, canonical errors, the loop and every
command (server.py), SGF reading and writing for `loadsgf`/`printsgf` (sgffile.py), the
`kosumi` command line that builds the engine (main.py), and `kosumi analysis`, KataGo's JSON
analysis protocol (analysis_engine.py, analysis_queue.py, analysis_main.py).

The top layer: may import every other subpackage except engine.training; only the entry points
(gtp_server.py, the `kosumi` console script) import it."""
