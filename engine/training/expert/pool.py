"""The self-play workers of an expert-iteration run (run.py): K local processes, or Ray actors on
one machine or a cluster, fed by one driver thread beside the learner.

A worker holds the net of the version it was last sent (shipped as the weight file's bytes, only
when the version is new to it) and plays a chunk of games a call (ExpertWorker.play()); the
driver writes each chunk that comes back (run.py's ExpertRun.write_games(): whole chunks only),
and hands the worker its next call with the newest accepted net. A worker that dies (its process
killed, its Ray node gone) loses the chunk in hand, never writes half of it, and is replaced.

Reading order: ExpertWorker, then Driver.run(); LocalPool and RayPool are the two ways to call.
"""
import multiprocessing
import queue
import signal
import sys
import tempfile
import threading
import time

import numpy as np
from threadpoolctl import threadpool_limits

from engine.nets.evaluator import JudgeEvaluator
from engine.training.expert.games import SEARCH_CACHE, play_game, settings_from

WAIT_SECONDS = 1.0            # longest wait for a result before the stop flag is read again


class ExpertWorker:
    """What a worker holds: the self-play settings, the net of one version, its random stream."""

    def __init__(self, selfplay, size, chunk_games):
        self.selfplay, self.size, self.chunk_games = settings_from(selfplay), size, chunk_games
        # one BLAS thread, as an engine plays (engine/gtp/__init__.py): numpy is loaded by now,
        # so the limit, not the environment, says it; kept for the worker's life
        self._blas = threadpool_limits(limits=1, user_api="blas")
        self.version, self.evaluator = None, None

    def play(self, version, weights, seed):
        """(version, the chunk's games) of net `version`, whose weight file's bytes are
        `weights` (None: the version the worker holds already)."""
        if weights is not None:
            with tempfile.NamedTemporaryFile(suffix=".npz") as file:
                file.write(weights)
                file.flush()
                self.evaluator = JudgeEvaluator.load(file.name, cache_size=SEARCH_CACHE,
                                                     precision=self.selfplay.precision)
            self.version = version
        if self.version != version:
            raise ValueError(f"worker holds net {self.version}, asked to play net {version}")
        rng = np.random.default_rng(seed)
        return version, [play_game(self.evaluator, self.size, self.selfplay, rng)
                         for _ in range(self.chunk_games)]


def _process_main(options, tasks, results, slot):
    signal.signal(signal.SIGINT, signal.SIG_IGN)       # the driver decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    worker = ExpertWorker(*options)
    while True:
        task = tasks.get()
        if task is None:
            return
        try:
            results.put((slot, worker.play(*task), None))
        except Exception as error:     # the driver reports it and gives the slot a new worker
            results.put((slot, None, f"{type(error).__name__}: {error}"))


class LocalPool:
    """K worker processes; call(slot, task) and finished() as RayPool's."""

    def __init__(self, options, workers):
        self.options = options
        self.context = multiprocessing.get_context("spawn")
        self.results = self.context.Queue()
        self.slots = [self._start(slot) for slot in range(workers)]

    def _start(self, slot):
        tasks = self.context.Queue()
        process = self.context.Process(target=_process_main, daemon=True,
                                       args=(self.options, tasks, self.results, slot))
        process.start()
        return process, tasks

    def call(self, slot, task):
        self.slots[slot][1].put(task)

    def finished(self, busy):
        """[(slot, result or None, error or None)] of calls done or workers dead; waits up to
        WAIT_SECONDS for the first."""
        done = []
        try:
            done.append(self.results.get(timeout=WAIT_SECONDS))
            while True:
                done.append(self.results.get_nowait())
        except queue.Empty:
            pass
        answered = {slot for slot, _, _ in done}
        for slot in busy - answered:
            process, _ = self.slots[slot]
            if not process.is_alive():
                done.append((slot, None, f"worker process exited ({process.exitcode})"))
                self.slots[slot] = self._start(slot)
        return done

    def close(self):
        for _, tasks in self.slots:
            tasks.put(None)
        for process, _ in self.slots:
            process.join(timeout=5)
            if process.is_alive():
                process.kill()


class RayPool:
    """K Ray actors (a cluster at `address`, or a local one for "local"), each an ExpertWorker;
    a weight file's bytes put in the object store once per version."""

    def __init__(self, options, workers, address):
        from engine.training.raypool import require_ray
        ray = self.ray = require_ray()
        if not ray.is_initialized():
            ray.init(address=None if address == "local" else address, include_dashboard=False,
                     log_to_driver=False, num_cpus=workers if address == "local" else None)
        self.options = options
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0)(ExpertWorker)
        self.actors = [self.actor_class.remote(*options) for _ in range(workers)]
        self.pending = {}            # ObjectRef -> slot

    def call(self, slot, task):
        version, weights, seed = task
        reference = self.actors[slot].play.remote(
            version, None if weights is None else self.ray.put(weights), seed)
        self.pending[reference] = slot

    def finished(self, busy):
        if not self.pending:
            time.sleep(WAIT_SECONDS)
            return []
        ready, _ = self.ray.wait(list(self.pending), num_returns=1, timeout=WAIT_SECONDS)
        done = []
        for reference in ready:
            slot = self.pending.pop(reference)
            try:
                done.append((slot, self.ray.get(reference), None))
            except Exception as error:      # the actor or its node died: a new actor
                done.append((slot, None, f"{type(error).__name__}"))
                self.replace(slot)
        return done

    def replace(self, slot):
        self.ray.kill(self.actors[slot], no_restart=True)
        self.actors[slot] = self.actor_class.remote(*self.options)

    def close(self):
        for actor in self.actors:
            self.ray.kill(actor, no_restart=True)


class Driver(threading.Thread):
    """Keeps every worker of a pool playing with the newest accepted net and writes the chunks
    that come back, until stop() is called."""

    def __init__(self, run, pool, workers, log=None):
        super().__init__(daemon=True)
        self.expert, self.pool, self.workers = run, pool, workers
        self.log = log or (lambda text: print(text, file=sys.stderr))
        self._stopping = threading.Event()
        self.error = None

    def stop(self):
        self._stopping.set()
        self.join()

    def run(self):
        try:
            self._drive()
        except BaseException as error:       # the learner's loop reports it and stops
            self.error = error

    def _drive(self):
        run = self.expert
        held = [None] * self.workers        # the net version each worker holds
        busy = set()
        calls, cached = 0, {}
        while not self._stopping.is_set():
            version = run.current_net()
            if version not in cached:
                cached = {version: run.net_bytes(version)}
            for slot in range(self.workers):
                if slot not in busy:
                    weights = None if held[slot] == version else cached[version]
                    seed = [run.settings.seed, slot, calls, int(time.time())]
                    self.pool.call(slot, (version, weights, seed))
                    held[slot] = version
                    busy.add(slot)
                    calls += 1
            for slot, result, error in self.pool.finished(busy):
                busy.discard(slot)
                if error is not None:
                    held[slot] = None
                    self.log(f"kosumi-train selfplay: worker {slot}: {error}; its chunk is lost, "
                             f"a new worker takes its place")
                    continue
                played_with, games = result
                run.write_games(played_with, slot, games)
        self.pool.close()
