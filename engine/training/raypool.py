"""kosumi-train --ray: the self-play workers as Ray actors, on one machine or a cluster.

Reading order: RayPool is the twin of workers.py's WorkerPool (submit, busy, next_result,
progress_text, close), so Trainer.run() learns from its games exactly as from the local
processes; only the self-play moves to the actors. Ray is imported when a RayPool is made, never
by a run without --ray.

Calls: an actor call plays k games (games_per_call, kosumi-train --ray-games-per-call) with one
weight version and returns them together: Ray's fixed work in the driver (the call, the wait, the
fetch) is paid once per k games. The pool still hands the learner one game at a time, the call's
games in a row; an actor gets its next call once every game of its last one was handed out, so
the games in hand (busy()) are those of the calls in flight plus those returned and not learned.

Weights: the learner publishes a weight version with ray.put once every A·k games learned (A: the
actors running), once per call of every actor, so each actor reads each version once, and the
object store ships it once per node, not once per call. Each call carries the version's
ObjectRef as a plain argument, which Ray resolves from the node's object store before the call
(cheaper for the driver than a reference nested in the arguments, which Ray pickles and tracks
as borrowed), and an actor replaces its copy only when the version is new to it: nearly every
call, a version being published once per call of every actor. A version is named by the games
its weights had learned; every game is logged with the version it was played with and its lag:
how many versions the learner published between its call's start and the call's return. A
call's games share that lag (its later games were played later on the same weights, but a
version spans a call of every actor, so the count in versions does not move within a call); in
games, the learner's weights are up to about 2·A·k games ahead of a game's (the log's game -
weight_version). A call more than max_weight_lag versions behind is refused, its games counted
one by one and none learned, and its actor starts again on the newest version.

Faults: the games of a call whose actor died (the process, or its whole node) are lost, each
counted as lost, never learned twice (Ray does not retry calls: max_task_retries 0; a call's
results come back all together or not at all), and the actor is replaced by a new one when the
cluster has a CPU for it; until then the run goes on with fewer.
An actor that cannot start at all (e.g. a node without kosumi installed) is not replaced, and when
no actor is left the run stops with an error. Each death or failed start is a log line
({"type": "actor", ...}); every STATUS_SECONDS a status line ({"type": "workers", ...}) gives
the games/s of each node and in total, the weight lag, the refused and lost games, and how busy
the learner is.
"""
import collections
import dataclasses
import json
import re
import signal
import socket
import sys
import time

import numpy as np

from engine.training.workers import SelfPlayWorker

MAX_WEIGHT_LAG = 8                   # versions a game's weights may lag. One is published each
                                     # time every actor could have finished a call, so a lag of 8
                                     # is a call 8 times slower than the rest: a stuck node's
                                     # games are refused, not learned from weights long gone
RAY_GAMES_PER_CALL = 8               # games an actor plays per call. Ray's fixed work in the
                                     # driver (most of the 2.3-2.9 ms a game of one game a call,
                                     # docs/notebook/ray.md) is shared by them: at 8, learning is
                                     # most of the driver's work; the weights get up to A·k games
                                     # older (A actors, k of these)

WAIT_SECONDS = 1.0          # longest wait for a game before the stop flag is looked at again
STATUS_SECONDS = 30.0       # between the log's status lines
RATE_WINDOW_SECONDS = 60.0  # games/s per node: over the last minute
RECENT_LAGS = 100           # games in the progress bar's weight lag
NODES_SHOWN = 4             # nodes named in the progress bar (all of them in the log)
ANSI_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # Ray colours the names in its error messages


def require_ray():
    """The ray module, or an exit that says how to install it."""
    try:
        import ray
    except ImportError:
        raise SystemExit("kosumi-train: --ray needs Ray: pip install 'kosumi[ray]'") from None
    return ray


def check_ray(address):
    """Exits with what to do when Ray is not installed or nothing answers at a HOST:PORT address
    (kosumi-train checks before it makes a run directory)."""
    require_ray()
    _check_reachable(address)


def _check_reachable(address):
    """A HOST:PORT address must answer: ray.init() would retry a dead one for minutes."""
    host, colon, port = address.rpartition(":")
    if not colon or not port.isdigit() or "://" in address:
        return                              # "local", "auto", a ray:// client address
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as error:
        raise SystemExit(f"kosumi-train: no Ray cluster answers at {address} ({error}); start "
                         f"one there with `ray start --head --port {port}`") from None


class SelfPlayActor:
    """A self-play worker in a Ray actor: holds a copy of the weights and replaces it only when
    a game comes with a newer version."""

    def __init__(self, settings_json, seed_sequence):
        self.worker = SelfPlayWorker(settings_json, seed_sequence)
        self.weights_version = None

    def node(self):
        """The IP address of the node the actor runs on (its answer also says it has started)."""
        import ray
        return ray.util.get_node_ip_address()

    def play(self, version, weights, phase, games):
        """A list of `games` games played with weight version `version`, whose parameters are
        `weights` (read-only: Ray's view of its object store)."""
        if version != self.weights_version:
            self.worker.network.set_params(weights)
            self.weights_version = version
        return [what_the_learner_reads(self.worker.play(phase)) for _ in range(games)]


@dataclasses.dataclass(frozen=True)
class _Call:
    """An actor call in flight."""
    worker_id: int
    version_index: int      # the weight version's number in this session (its lag counts from it)
    version: int            # the version's name: the games its weights had learned
    games: int


class RayPool:
    """Self-play actors on a Ray cluster, each with one call of up to games_per_call games in
    hand at a time.

    trainer: the Trainer whose network and counter the games serve; address: ray.init()'s
    ("local", "auto", HOST:PORT; ignored when this process is already connected to Ray); actors:
    how many (None: one per CPU of the cluster); games: the run's target (None: no end), so that
    no call plays games beyond it and a replacement actor gets a call only when games are still
    wanted; log: the run's log stream; stop: the trainer's Interrupted flag (next_result returns
    None once it is set)."""

    def __init__(self, trainer, address, actors, games, max_weight_lag, games_per_call, log, stop):
        if games_per_call < 1:
            raise ValueError(f"games per actor call must be at least 1, not {games_per_call}")
        ray = self.ray = require_ray()
        self.trainer, self.games, self.max_weight_lag = trainer, games, max_weight_lag
        self.games_per_call = games_per_call
        self.log, self.stop = log, stop
        self.owns_ray = not ray.is_initialized()
        if self.owns_ray:
            _check_reachable(address)
            # ray.init() puts in a SIGTERM handler that exits at once; the trainer's own
            # (Interrupted) checkpoints first, so it is put back.
            sigterm_handler = signal.getsignal(signal.SIGTERM)
            try:
                # A local Ray needs no dashboard; a cluster has the one its head started.
                ray.init(address=address, include_dashboard=False if address == "local" else None)
            except ConnectionError as error:
                raise SystemExit(f"kosumi-train: cannot connect to the Ray cluster at "
                                 f"{address!r}: {error}") from None
            finally:
                if sigterm_handler is not None:
                    signal.signal(signal.SIGTERM, sigterm_handler)
        try:
            self._start(actors)
        except BaseException:
            self._shut_down()
            raise

    def _start(self, actors):
        ray = self.ray
        cpus = int(ray.cluster_resources().get("CPU", 0))
        count = actors if actors is not None else cpus
        if count < 1:
            raise SystemExit("kosumi-train: the Ray cluster has no CPU for a self-play actor")
        if count > cpus:
            print(f"kosumi-train: {count} actors asked for, the Ray cluster has {cpus} CPUs: "
                  f"the others start when CPUs are free", file=sys.stderr)
        # Ray must not restart actors or retry games: a lost game is counted and replaced here,
        # and a retried one could be learned twice.
        self.actor_class = ray.remote(num_cpus=1, max_restarts=0,
                                      max_task_retries=0)(SelfPlayActor)
        # Fresh streams for each run and resumption, as the local pool's; replacements go on
        # spawning from the same sequence.
        self.seeds = np.random.SeedSequence([self.trainer.settings.seed,
                                             self.trainer.games_trained])
        self.settings_json = self.trainer.settings.to_json()
        self.actors = {}            # worker id -> actor handle (started or starting)
        self.starting = {}          # the ref of an actor's node() call -> worker id
        self.nodes = {}             # worker id -> node address, for the started actors
        self.idle = set()           # started actors without a call, all its games handed out
        self.in_flight = {}         # the ref of a play() call -> its _Call
        self.games_in_flight = 0    # the games of those calls
        self.returned = collections.deque()   # games returned and not yet handed to the learner,
                                    # a call's in a row: (worker id, result, log fields, whether
                                    # it is its call's last)
        self.next_worker_id = 0
        self.weights_ref = None
        self.weights_game = None    # the version being handed out: the games its weights learned
        self.version_index = 0      # versions published so far in this session
        self.arrivals = collections.deque()           # (time, node) of the games learned
        self.arrivals_by_node = collections.Counter()   # the same, counted per node
        self.recent_lags = collections.deque(maxlen=RECENT_LAGS)
        self.counts = {"refused_stale": 0, "lost_games": 0, "actors_replaced": 0,
                       "actors_failed": 0}
        self.created = self.last_status = time.monotonic()
        self.first_started = None   # when the first actor was ready: rates are counted from there
        self.waited = self.waited_at_status = 0.0     # seconds the learner waited for games
        self.waiting_reported = False
        for _ in range(count):
            self._start_actor()

    # ------------------------------------------------------------ the pool's interface

    def submit(self, worker_id):
        """The learner has learned one of the actor's games and wants more (Trainer.run calls
        this after each game): its next call starts once its last call's games are all handed
        out, i.e. after its last game."""
        if worker_id in self.idle:
            self._call(worker_id)

    def busy(self):
        """The games in hand: those of the calls in flight and those returned, not yet learned."""
        return self.games_in_flight + len(self.returned)

    def next_result(self):
        """The next game to learn: (worker id, play_training_game()'s result, log fields: node,
        weight version and lag), or None when the stop flag was set while waiting. Deaths,
        started actors and refused calls are dealt with on the way."""
        while True:
            if self.returned:
                return self._hand_out_game()
            if self.stop.stop:
                return None
            self._fill()
            self._write_status_when_due()
            refs = list(self.in_flight) + list(self.starting)
            if not refs:
                raise RuntimeError(
                    f"kosumi-train: no self-play actor is left ({self.counts['lost_games']} games "
                    f"lost to dead actors, {self.counts['actors_failed']} actors could not start; "
                    f"the log's \"actor\" lines say why). Is kosumi installed on every node?")
            if not self.nodes and not self.waiting_reported and \
                    time.monotonic() - self.created > 60:
                print(f"kosumi-train: waiting for Ray to start {len(self.starting)} self-play "
                      f"actor(s): no CPU free in the cluster?", file=sys.stderr)
                self.waiting_reported = True
            start = time.monotonic()
            ready_refs, _ = self.ray.wait(refs, num_returns=1, timeout=WAIT_SECONDS)
            if ready_refs:      # take every call that is in, not one wait per call
                ready_refs, _ = self.ray.wait(refs, num_returns=len(refs), timeout=0)
            self.waited += time.monotonic() - start
            for ref in ready_refs:
                self._take(ref)

    def progress_text(self):
        """Games/s per node, the actors, the weight lag, refused and lost games."""
        rates = self._node_rates()
        shown = ", ".join(f"{node} {rate:.1f}" for node, rate in sorted(rates.items())[:NODES_SHOWN])
        text = f"{len(self.nodes)} actors; g/s by node: {shown}"
        if len(rates) > NODES_SHOWN:
            text += f" (+{len(rates) - NODES_SHOWN} nodes)"
        if self.recent_lags:
            text += (f"; weight lag {np.mean(self.recent_lags):.1f} "
                     f"(max {max(self.recent_lags)})")
        for name in ("refused_stale", "lost_games"):
            if self.counts[name]:
                text += f"; {name.replace('_', ' ')} {self.counts[name]}"
        return text

    def close(self):
        """A last status line, then the actors are killed (their games in hand, in flight or
        returned and not learned, are dropped) and a Ray this pool started is shut down."""
        try:
            self._write_status()
        finally:
            self._shut_down()

    # ------------------------------------------------------------ actors

    def _start_actor(self):
        worker_id = self.next_worker_id
        self.next_worker_id += 1
        actor = self.actor_class.remote(self.settings_json, self.seeds.spawn(1)[0])
        self.actors[worker_id] = actor
        self.starting[actor.node.remote()] = worker_id
        return worker_id

    def _take(self, ref):
        """A ready ref: an actor that started (or could not), a call that came back (its games
        queued for the learner unless refused as stale) or a call lost with its actor."""
        ray = self.ray
        if ref in self.starting:
            worker_id = self.starting.pop(ref)
            try:
                self.nodes[worker_id] = ray.get(ref)
            except (ray.exceptions.RayActorError, ray.exceptions.ActorUnschedulableError) as error:
                self.counts["actors_failed"] += 1
                self._forget(worker_id)
                self._log_actor_event(worker_id, None, "failed to start", error)
                return None
            self.idle.add(worker_id)
            if self.first_started is None:
                self.first_started = time.monotonic()
            return
        call = self.in_flight.pop(ref)
        self.games_in_flight -= call.games
        try:
            results = ray.get(ref)
        # ObjectLostError: the games were played, but their node died before they were fetched
        except (ray.exceptions.RayActorError, ray.exceptions.ObjectLostError) as error:
            node = self.nodes.get(call.worker_id)
            self.counts["lost_games"] += call.games
            self.counts["actors_replaced"] += 1
            self._forget(call.worker_id)
            replacement = self._start_actor()
            self._log_actor_event(call.worker_id, node, "died", error, replacement, call.games)
            return
        lag = self.version_index - call.version_index
        if self.max_weight_lag is not None and lag > self.max_weight_lag:
            self.counts["refused_stale"] += len(results)   # _fill() gives it the newest weights
            self.idle.add(call.worker_id)
            return
        tags = {"node": self.nodes[call.worker_id], "weight_version": call.version,
                "weight_lag": lag}
        for index, result in enumerate(results):
            # own arrays at once, so that Ray's shared memory holding the call is freed
            self.returned.append((call.worker_id, _own_arrays(result), tags,
                                  index == len(results) - 1))

    def _hand_out_game(self):
        """The oldest returned game, for the learner; the actor is free for a new call once it
        was its call's last."""
        worker_id, result, tags, last_of_call = self.returned.popleft()
        if last_of_call:
            self.idle.add(worker_id)
        node = tags["node"]
        self.arrivals.append((time.monotonic(), node))
        self.arrivals_by_node[node] += 1
        self.recent_lags.append(tags["weight_lag"])
        return worker_id, result, tags

    def _forget(self, worker_id):
        """Drop a dead actor (killed too, in case it is only unreachable)."""
        actor = self.actors.pop(worker_id)
        self.nodes.pop(worker_id, None)
        self.idle.discard(worker_id)
        self.ray.kill(actor)

    def _fill(self):
        """Calls for the idle actors, as long as the run wants more games."""
        for worker_id in sorted(self.idle):
            if self.games is not None and self.trainer.games_trained + self.busy() >= self.games:
                break
            self._call(worker_id)

    def _call(self, worker_id):
        """Give the idle actor a call with the newest weight version (published now if it is
        due): games_per_call games, fewer when the run's target wants fewer (callers make sure
        it wants at least one)."""
        games = self.games_per_call
        if self.games is not None:
            games = min(games, self.games - self.trainer.games_trained - self.busy())
        self.idle.discard(worker_id)
        weights_ref = self._current_weights()
        play = self.actors[worker_id].play.remote(self.weights_game, weights_ref,
                                                  self.trainer.phase, games)
        self.in_flight[play] = _Call(worker_id, self.version_index, self.weights_game, games)
        self.games_in_flight += games

    def _current_weights(self):
        """The ObjectRef of the newest version, published anew once every started actor could
        have finished a call since the last (at least one game learned)."""
        due = max(1, len(self.nodes)) * self.games_per_call
        if self.weights_ref is None or self.trainer.games_trained - self.weights_game >= due:
            self.weights_ref = self.ray.put(self.trainer.network.get_params())
            self.weights_game = self.trainer.games_trained
            self.version_index += 1
        return self.weights_ref

    def _shut_down(self):
        for actor in getattr(self, "actors", {}).values():
            self.ray.kill(actor)
        if self.owns_ray:
            self.ray.shutdown()

    # ------------------------------------------------------------ what a person watching sees

    def _node_rates(self):
        now = time.monotonic()
        while self.arrivals and self.arrivals[0][0] < now - RATE_WINDOW_SECONDS:
            _, node = self.arrivals.popleft()
            self.arrivals_by_node[node] -= 1
        span = max(min(RATE_WINDOW_SECONDS, now - (self.first_started or now)), 1e-9)
        counts = self.arrivals_by_node
        nodes = set(self.nodes.values()) | {node for node, count in counts.items() if count}
        return {node: counts[node] / span for node in sorted(nodes)}

    def _write_status_when_due(self):
        if time.monotonic() - self.last_status >= STATUS_SECONDS:
            self._write_status()

    def _write_status(self):
        now = time.monotonic()
        rates = self._node_rates()
        actors_per_node = collections.Counter(self.nodes.values())
        interval = max(now - self.last_status, 1e-9)
        line = {"type": "workers", "game": self.trainer.games_trained,
                "actors": len(self.nodes), "actors_starting": len(self.starting),
                "games_per_second": round(sum(rates.values()), 3),
                "nodes": {node: {"actors": actors_per_node[node], "games_per_second": round(rate, 3)}
                          for node, rate in rates.items()},
                "weight_version": self.weights_game,
                "weight_lag_mean": round(float(np.mean(self.recent_lags)), 3) if self.recent_lags else None,
                "weight_lag_max": max(self.recent_lags) if self.recent_lags else None,
                "max_weight_lag": self.max_weight_lag, "games_per_call": self.games_per_call,
                # the share of the time the learner was not waiting for games: near 1, the
                # learner is what limits the run, and more actors would not help
                "learner_busy": round(1.0 - min((self.waited - self.waited_at_status) / interval, 1.0), 3),
                **self.counts}
        self.log.write(json.dumps(line) + "\n")
        self.log.flush()
        self.last_status, self.waited_at_status = now, self.waited

    def _log_actor_event(self, worker_id, node, event, error, replacement=None, games_lost=0):
        """The whole error goes to the log (Ray's say where the actor ran and, for a failed start,
        the exception with its traceback); its last line, the cause, to stderr."""
        lines = [line.strip() for line in ANSI_COLOUR.sub("", str(error)).splitlines() if line.strip()]
        message = " ".join(lines) or type(error).__name__
        line = {"type": "actor", "game": self.trainer.games_trained, "worker": worker_id,
                "node": node, "event": event, "replacement": replacement,
                "games_lost": games_lost, "error": message}
        self.log.write(json.dumps(line) + "\n")
        self.log.flush()
        what = (f"died; its {games_lost} game(s) in hand are lost, worker {replacement} "
                f"replaces it" if event == "died" else "could not start and is not replaced")
        print(f"kosumi-train: self-play actor {worker_id}{f' on {node}' if node else ''} {what} "
              f"({lines[-1] if lines else type(error).__name__})", file=sys.stderr)


def what_the_learner_reads(result):
    """A game's result as an actor sends it. Blair's procedure (a gradient came with the game):
    the learner steps on the gradient and counts the trained positions, so the positions
    themselves stay with the actor: a 9x9 game's multi-hot inputs are about 1 MB, its gradient
    47 kB, and the learner receives every game of the cluster. NeuroGo's procedure replays the
    games: all of it goes."""
    game, grad, loss, entries = result
    if grad is None:
        return result
    return dataclasses.replace(game, inputs=game.inputs[:0], observed=None), grad, loss, entries


def _own_arrays(result):
    """The result with arrays of its own: Ray hands over large arrays as read-only views of its
    shared memory, which the nets' training code cannot take and the learner would keep pinned
    (NeuroGo's recent games); the local pool's pipe gives ordinary arrays, and so does this."""
    game, grad, loss, entries = result
    arrays = {field.name: np.array(getattr(game, field.name)) for field in dataclasses.fields(game)
              if isinstance(getattr(game, field.name), np.ndarray)}
    return (dataclasses.replace(game, **arrays), None if grad is None else np.array(grad),
            loss, entries)
