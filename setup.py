"""Builds kosumi's Cython extensions; everything else is in pyproject.toml.

Both steps of the build use every core: Cython's translation to C and the C compiler, the longest
compilations first. Each compiled extension is kept in build/extensions/ under a digest of
everything that decides its binary (its .pyx and every .pxd it cimports, Cython's and numpy's
versions, the compiler's command and flags, the Python it is built for), so that the README's test
command, right after its set-up command, copies what the set-up compiled instead of translating
and compiling it again; a change to any of those builds that extension afresh."""
import hashlib
import os
import shutil
import sys
from pathlib import Path

import Cython
import numpy
from Cython.Build import cythonize
from Cython.Build.Dependencies import create_dependency_tree
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

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
    "engine.search.puct",         # cimports playout
]

ROOT = Path(__file__).resolve().parent
COMPILED = ROOT / "build" / "extensions"
CORES = os.cpu_count() or 1
DIRECTIVES = {"language_level": 3}


class ParallelCachedBuild(build_ext):
    """build_ext on every core, copying an extension built before from the same inputs."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            self.parallel = CORES

    def build_extensions(self):
        every = self.extensions
        kept = {ext.name: COMPILED / f"{ext.name}.{self._inputs_digest(ext)}"
                                     f"{Path(self.get_ext_filename(ext.name)).suffix}"
                for ext in every}
        missing = [ext for ext in every if self.force or not kept[ext.name].is_file()]
        for ext in every:
            if ext not in missing:
                target = Path(self.get_ext_fullpath(ext.name))
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(kept[ext.name], target)
        if missing:
            # the C sources go into the extensions setuptools has already prepared
            translated = cythonize(missing, compiler_directives=DIRECTIVES, nthreads=CORES,
                                   force=self.force)
            sources = {ext.name: ext.sources for ext in translated}
            for ext in missing:
                ext.sources = sources[ext.name]
            # the pool takes them in this order: the largest first leave no core idle at the end
            self.extensions = sorted(missing, key=lambda e: -sum(map(os.path.getsize, e.sources)))
            try:
                super().build_extensions()
            finally:
                self.extensions = every
            COMPILED.mkdir(parents=True, exist_ok=True)
            for ext in missing:
                partial = COMPILED / f"{kept[ext.name].name}.{os.getpid()}.tmp"
                shutil.copyfile(self.get_ext_fullpath(ext.name), partial)
                os.replace(partial, kept[ext.name])

    def _inputs_digest(self, ext):
        digest = hashlib.sha256()
        for source in ext.sources:
            for path in sorted(create_dependency_tree().all_dependencies(source)):
                # numpy's .pxd lies in each build environment's own folder: its version names it
                path = Path(path).resolve()
                digest.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT)
                                  else path.name).encode())
                digest.update(path.read_bytes())
        # the include directories' paths change with each isolated build environment: numpy's
        # version stands for its headers, Python's for its own
        decided_by = (Cython.__version__, numpy.__version__, sys.version, sys.platform, DIRECTIVES,
                      self.compiler.compiler_so, self.compiler.linker_so, ext.extra_compile_args,
                      ext.extra_link_args, ext.define_macros, ext.undef_macros, ext.libraries)
        digest.update(repr(decided_by).encode())
        return digest.hexdigest()[:20]


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

setup(ext_modules=extensions, cmdclass={"build_ext": ParallelCachedBuild})
