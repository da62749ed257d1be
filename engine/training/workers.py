"""Self-play workers: what a worker holds (`SelfPlayWorker`: the settings, its own copy of the
net, its random stream), and `WorkerPool`, K local processes playing games for the learner.

With K > 1 workers, K processes play games with a copy of the weights as of their last game and
send back the game's gradient (Blair) or the game itself (NeuroGo); the learner
(engine/training/trainer.py) applies them in arrival order and sends the worker the new weights
with its next game. With several workers the arrival order varies, so runs are not reproducible
(one worker plays in-process, and such a run is). engine/training/raypool.py's RayPool has the
same interface (submit, busy, next_result, progress_text, close) over Ray actors, each holding a
SelfPlayWorker.
"""
import multiprocessing
import signal

import numpy as np

from engine.training.learning import play_training_game
from engine.training.settings import TrainSettings, new_network

STOP_SIGNAL_EXITS = {-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP}   # a worker's exit code
                                                    # when a signal stopped it


class SelfPlayWorker:
    """What a self-play worker holds, in a process of the local pool or in a Ray actor
    (engine/training/raypool.py): the settings, its own copy of the net and its random stream."""

    def __init__(self, settings_json, seed_sequence):
        self.settings = TrainSettings.from_json(settings_json)
        self.network = new_network(self.settings)
        self.rng = np.random.default_rng(seed_sequence)

    def play(self, phase):
        """One game with the weights it holds: play_training_game()'s (game, gradient, loss,
        entries)."""
        return play_training_game(self.network, self.settings, phase, self.rng)


def _worker_main(worker_id, settings_json, seed_sequence, tasks, results):
    """A self-play process: receives (params, phase) or None (stop), returns game results."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # the learner decides when to stop
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    worker = SelfPlayWorker(settings_json, seed_sequence)
    while True:
        task = tasks.recv()
        if task is None:
            break
        params, phase = task
        worker.network.set_params(params)
        results.put((worker_id, worker.play(phase)))


class WorkerPool:
    """Self-play processes, each with one game in hand at a time. A worker stopped by a signal
    (systemd, `pkill -f kosumi-train` and the like signal every process of the run) stops the
    run as the learner's own signal would: a checkpoint, then exit."""

    def __init__(self, trainer, workers, stop):
        self.trainer = trainer
        self.stop = stop
        context = multiprocessing.get_context("fork")
        self.results = context.Queue()
        self.connections, self.processes = [], []
        # Each run (and each resumption) gets fresh worker streams from the seed and the counter.
        base = np.random.SeedSequence([trainer.settings.seed, trainer.games_trained])
        for worker_id, child in enumerate(base.spawn(workers)):
            parent_end, child_end = context.Pipe()
            process = context.Process(target=_worker_main, daemon=True,
                                      args=(worker_id, trainer.settings.to_json(), child,
                                            child_end, self.results))
            process.start()
            self.connections.append(parent_end)
            self.processes.append(process)
        self.in_hand = [False] * workers
        for worker_id in range(workers):
            self.submit(worker_id)

    def submit(self, worker_id):
        try:
            self.connections[worker_id].send((self.trainer.network.get_params(),
                                              self.trainer.phase))
        except OSError:              # it died after sending its last game: next_result says why
            return
        self.in_hand[worker_id] = True

    def busy(self):
        return sum(self.in_hand)

    def next_result(self):
        """(worker id, play_training_game()'s result, extra log fields: none here), or None when
        a worker was stopped by a signal."""
        while True:
            try:
                worker_id, result = self.results.get(timeout=1.0)
            except Exception:                       # queue.Empty: check the workers are alive
                dead = [p for p in self.processes if not p.is_alive()]
                if not dead:
                    continue
                code = dead[0].exitcode
                if code in STOP_SIGNAL_EXITS:
                    self.stop.stop = True
                    self.stop.signal_name = f"{signal.Signals(-code).name} to a self-play worker"
                    return None
                raise RuntimeError(f"self-play worker died (exit code {code})")
            self.in_hand[worker_id] = False
            return worker_id, result, {}

    def progress_text(self):
        """The local processes add nothing to the progress bar."""
        return ""

    def close(self):
        for connection in self.connections:
            try:
                connection.send(None)
            except OSError:
                pass
        for process in self.processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join()
