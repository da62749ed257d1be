"""`python -m engine.match`: the match tool, kept under its documented name (engine/tools/match.py)."""
import sys

from engine.tools.match import main

if __name__ == "__main__":
    sys.exit(main())
