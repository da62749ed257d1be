"""kosumi's test suite, by layer: unit/<subsystem>/ (one folder per folder of engine/),
integration/ (with programs from outside Python), regress/ (GTP regression scripts, golden games);
conftest.py says which markers each carries, docs/ARCHITECTURE.md how to run each."""
