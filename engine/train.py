"""`python -m engine.train`: the trainer, kept under its documented name (engine/training/train.py)."""
import sys

from engine.training.train import main

if __name__ == "__main__":
    sys.exit(main())
