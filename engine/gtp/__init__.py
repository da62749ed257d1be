"""The GTP front end. Its modules import one way, each only modules listed before it:
- protocol.py: GTP knowing no Go: the command registry, argument types, canonical errors, the
  loop (pipelining, streamed analysis closed by the next line);
- goargs.py: colour and vertex arguments, the failure texts of the Go commands;
- sgffile.py: SGF reading and writing for `loadsgf`/`printsgf`;
- formats.py: the analysis formats: GoGui gfx, KataGo `kata-analyze` and Leela Zero `lz-analyze`
  arguments and info lines;
- options.py: the command lines' options, generated from the players' settings, and those both
  command lines share (the nets, the log);
- params.py: the players' settings at run time by name (`kosumi-*-param`, GoGui's `param`);
- commands.py: `KosumiEngine`, every GTP command;
- analysis_engine.py, analysis_queue.py, analysis_main.py: `kosumi analysis`, KataGo's JSON
  analysis protocol;
- main.py: the `kosumi` command line that builds the engine.

The top layer: may import every other subpackage except engine.training; only the entry points
(gtp_server.py, the `kosumi` console script) import it."""
import os

# One BLAS thread in an engine process unless the user sets another count: the nets' heads
# multiply with numpy, whose OpenBLAS otherwise spreads every small product over all cores and
# spins waiting for them; beside a GNU Go, a second engine or a search's own threads that cost
# the judging net's search 3.5 times its speed (2026-12-02). Set before numpy loads OpenBLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
