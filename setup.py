"""Builds kosumi's Cython extensions; everything else is in pyproject.toml."""
import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

CYTHON_MODULES = [
    "engine.rules.board",
    "engine.tactics.ladder",
    "engine.tactics.selfatari",
    "engine.tactics.nakade",
    "engine.nets.features",       # cimports ladder
    "engine.nets.network_forward",  # cimports features
    "engine.nets.network_targets",  # cimports network_forward
    "engine.nets.network",        # cimports network_forward
    "engine.nets.softseg_pathfinder",
    "engine.nets.softseg_targets",
    "engine.nets.softseg_forward",  # cimports features, softseg_pathfinder
    "engine.nets.softseg",        # cimports softseg_forward, softseg_targets
    "engine.nets.unitgraph",      # cimports features
    "engine.nets.unitnet",        # cimports unitgraph
    "engine.nets.policy_inputs",  # cimports features
    "engine.nets.winograd_tiles",
    "engine.nets.winograd_products",
    "engine.search.playout",      # cimports ladder, selfatari, nakade
    "engine.search.tree",         # cimports playout, selfatari
]

extensions = [
    Extension(
        name,
        [name.replace(".", "/") + ".pyx"],
        include_dirs=[numpy.get_include()],
        extra_compile_args=["-O3"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in CYTHON_MODULES
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": 3},
    )
)
