"""The queue and the threads of `kosumi analysis`, KataGo's JSON analysis engine over kosumi's
search, for KaTrain and other review tools (docs/ANALYSIS_ENGINE.md; the command line is
analysis_main.py, queries and answers analysis_engine.py).

Reading order: `AnalysisServer.handle()` (one input line: an action is answered at once, a query
is checked by analysis_engine.parse_query() and its positions queued), `JobQueue` (highest
priority first, then arrival), `Worker._search()` (one position searched in slices: answers
during the search, terminate, pre-emption).

Threads: the main thread reads stdin; a writer thread writes every line out, so that nothing
waits for the client to read; `--workers` threads each take the most urgent position and search
it with their own SearchPlayer (its own trees and evaluator twin; the tree search releases the
GIL, so the workers use the cores). A search runs in slices of SLICE_SECONDS (SearchPlayer's
search() keeps the tree from one slice to the next), so that between slices a worker can answer
`reportDuringSearchEvery`, stop for `terminate`, and give way: when a waiting position has a
higher priority than the one it searches and no worker is idle, it parks that search (its trees
stay in that level's SearchPlayer) and serves the urgent one first, up to PREEMPTION_LEVELS deep.
KataGo's workers do not pre-empt; KaTrain relies on priorities (a whole game queued at -100
below the position on screen at 1000), and with two cores nothing else keeps the position on
screen from waiting for the game. Every position ends with exactly one answer whose
isDuringSearch is false (or noResults when it was terminated before any visit), as the protocol
promises.
"""
import heapq
import itertools
import logging
import math
import queue
import threading
import time
import traceback

import numpy as np

from engine import __version__
from engine.gtp.analysis_engine import (ProtocolError, answer, encode, error_json, no_results,
                                        parse_query, parse_terminate, policy_list, read_query)
from engine.rules.board import PASS

log = logging.getLogger("kosumi.analysis")

SLICE_SECONDS = 0.1      # a search slice: terminate and pre-emption take effect within one
MIN_SLICE_SECONDS = 0.005
PREEMPTION_LEVELS = 3    # searches one worker can hold: the running one and two parked below it
ACTIONS = ("query_version", "clear_cache", "terminate", "terminate_all")


class Job:
    """A PositionRequest's life in the server; `finished` once its last answer is written."""

    def __init__(self, request, sequence):
        self.request, self.sequence = request, sequence
        self.running = False
        self.stop = False            # terminate asked; the worker answers with what it has
        self.finished = False
        self.analysis = None         # the latest SearchAnalysis
        self.level = 0
        self.probabilities = None    # the policy net's, computed once
        self.move_ownership = {}     # move -> ownership after it (the value net's), cached


class JobQueue:
    """Jobs by priority (highest first), then arrival; closed when the input ends."""

    def __init__(self):
        self._heap = []
        self._condition = threading.Condition()
        self._closed = False
        self._idle = 0            # workers waiting in take()

    def put(self, job):
        with self._condition:
            heapq.heappush(self._heap, (-job.request.priority, job.sequence, job))
            self._condition.notify()

    def close(self):
        with self._condition:
            self._closed = True
            self._condition.notify_all()

    def _head(self):
        while self._heap and self._heap[0][2].finished:      # terminated while queued
            heapq.heappop(self._heap)
        return self._heap[0][2] if self._heap else None

    def take(self):
        """The most urgent job, waiting for one; None once closed and empty."""
        with self._condition:
            while True:
                job = self._head()
                if job is not None:
                    heapq.heappop(self._heap)
                    job.running = True
                    return job
                if self._closed:
                    return None
                self._idle += 1
                self._condition.wait()
                self._idle -= 1

    def take_above(self, priority):
        """The most urgent job if its priority is above `priority` and no worker is idle to
        take it, else None (no wait)."""
        with self._condition:
            job = self._head()
            if job is None or job.request.priority <= priority or self._idle:
                return None
            heapq.heappop(self._heap)
            job.running = True
            return job


class AnalysisServer:
    """Reads lines, answers actions, queues positions, writes every answer as one line."""

    def __init__(self, config, make_player, output, workers=2, predictor=None):
        self.config = config
        self.output = output
        self.queue = JobQueue()
        self.predictor = predictor
        self._lock = threading.Lock()        # open jobs and the output
        self._open = {}                      # sequence -> Job, until its last answer
        self._sequence = itertools.count()
        self.broken = False                  # stdout closed: nobody is left to answer
        # Lines go out through a writer thread, so that neither the reader nor a worker ever
        # waits for the client to read (a client that writes all its queries before reading
        # any answer would otherwise deadlock with us); the queue keeps their order.
        self._outbox = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_lines, name="analysis-out",
                                        daemon=True)
        self._writer.start()
        self.workers = [Worker(self, make_player, i, None if predictor is None else
                               predictor.twin()) for i in range(workers)]
        self._threads = [threading.Thread(target=worker.run, name=f"analysis-{i}", daemon=True)
                         for i, worker in enumerate(self.workers)]
        for thread in self._threads:
            thread.start()

    # --- output ---------------------------------------------------------------------------

    def write(self, message):
        line = encode(message)
        with self._lock:
            self._write(line)

    def _write(self, line):
        """Queue a line (callers hold the lock, so lines leave in the order they were made)."""
        self._outbox.put(line)

    def _write_lines(self):
        while (line := self._outbox.get()) is not None:
            if self.broken:
                continue
            try:
                self.output.write(line.encode("utf-8"))
                self.output.flush()
            except (BrokenPipeError, OSError, ValueError):   # nobody reads: stop every search
                self.broken = True
                with self._lock:
                    for job in self._open.values():
                        job.stop = True
                self.queue.close()
            log.debug(">> %s", line.rstrip("\n")[:300])

    def emit(self, job, message, final):
        """A job's answer, unless its last answer is out already; the last one closes it."""
        line = encode(message)
        with self._lock:
            if job.finished:
                return
            if final:
                job.finished = True
                self._open.pop(job.sequence, None)
            self._write(line)

    # --- input ----------------------------------------------------------------------------

    def run(self, lines, wait=True):
        """Handle every line, then (wait) finish the queued positions or (not wait) terminate
        them. Returns the exit status."""
        for raw in lines:
            if self.broken:
                break
            line = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
            if line.strip():
                self.handle(line.strip())
        self.close(wait)
        return 0

    def close(self, wait=True):
        """No more input: finish (or, not wait, terminate) the open jobs, then stop the
        workers."""
        if not wait:
            self.terminate(None, None)
        self.queue.close()
        for thread in self._threads:
            thread.join()
        self._outbox.put(None)
        self._writer.join()

    def handle(self, line):
        log.debug("<< %s", line)
        query_id = None
        try:
            query = read_query(line)
            query_id = query["id"]
            if "action" in query:
                self._action(query)
                return
            requests, warnings = parse_query(query, self.config)
            for warning in warnings + self._warnings(query_id, requests):
                self.write(warning)
            jobs = [Job(request, next(self._sequence)) for request in requests]
            with self._lock:
                self._open.update((job.sequence, job) for job in jobs)
            for job in jobs:
                self.queue.put(job)
        except ProtocolError as error:
            self.write(error.to_json())
        except Exception as error:   # a bug must not kill the engine: report it and go on
            log.error("internal error on %r:\n%s", line[:300], traceback.format_exc())
            self.write(error_json(f"internal error: {type(error).__name__}: {error}",
                                  query_id=query_id))

    def _action(self, query):
        action = query["action"]
        if action == "query_version":
            self.write({**query, "version": __version__, "git_hash": "<omitted>"})
        elif action == "clear_cache":
            for worker in self.workers:
                worker.clear_requested = True
            self.write(query)
        elif action in ("terminate", "terminate_all"):
            terminate_id, turns = parse_terminate(query)
            self.terminate(terminate_id, turns)
            self.write(query)
        else:
            raise ProtocolError("'action' field must be 'query_version' or 'clear_cache' or "
                                "'terminate' or 'terminate_all'", "action", query["id"])

    def _warnings(self, query_id, requests):
        """What a query asks for that kosumi cannot give here, one warning each."""
        if not requests:
            return []
        request = requests[0]
        warnings = []
        if request.include_policy and self.predictor is None:
            warnings.append(error_json("No policy network (kosumi analysis --policy PATH): "
                                       "policy left out", "includePolicy", query_id, "warning"))
        if request.include_moves_ownership and \
                not self.workers[0].has_move_ownership(request.state.size):
            warnings.append(error_json(
                "kosumi's tree keeps ownership at the root only, and the value net's ownership "
                "after each move is given only where the search uses the net (below 13 lines, "
                "or a judging net's PUCT search): ownership per move left out",
                "includeMovesOwnership", query_id, "warning"))
        return warnings

    def terminate(self, terminate_id, turns):
        """Stop the open jobs of an id (None: every job), of the given turns (None: all). A
        queued job is answered with noResults at once; a running one answers with what its
        search has, within a slice."""
        with self._lock:
            chosen = [job for job in self._open.values()
                      if (terminate_id is None or job.request.id == terminate_id) and
                      (turns is None or job.request.turn in turns)]
            for job in chosen:
                job.stop = True
                if not job.running:
                    job.finished = True
                    self._open.pop(job.sequence, None)
                    self._write(encode(no_results(job.request)))


class Worker:
    """A thread's searches: one SearchPlayer per pre-emption level, made on first use."""

    def __init__(self, server, make_player, index, predictor):
        self.server = server
        self.make_player = make_player
        self.index = index
        self.predictor = predictor
        self.players = [make_player(index, 0)]     # made here: the reader thread asks it too
        self.parked = []              # jobs waiting below the one being searched
        self.clear_requested = False

    def player(self, level):
        while len(self.players) <= level:
            self.players.append(self.make_player(self.index, len(self.players)))
        return self.players[level]

    def has_move_ownership(self, size):
        """Whether the value net's ownership after a move is kosumi's estimate on this size:
        where the search uses the net (below 13 lines by default; every size for the PUCT
        search over a judging net), and the net is a net."""
        from engine.nets.evaluator import UniformEvaluator
        from engine.play.search_player import uses_puct
        player = self.player(0)
        if isinstance(player.evaluator, UniformEvaluator):
            return False
        return uses_puct(player.settings, player.evaluator) or player.settings_for(size)[0]

    def run(self):
        while True:
            job = self.server.queue.take()
            if job is None:
                return
            if self.clear_requested:
                self._clear_caches()
            self.serve(job, 0)

    def _clear_caches(self):
        self.clear_requested = False
        for player in self.players:
            getattr(player.evaluator, "clear_cache", lambda: None)()
        if self.predictor is not None:
            self.predictor.cache.clear()

    def serve(self, job, level):
        job.level = level
        try:
            self._search(job, level)
            self._finish(job)
        except Exception as error:   # answered with the query's id; the worker goes on
            log.error("internal error in %s turn %d:\n%s", job.request.id, job.request.turn,
                      traceback.format_exc())
            self.server.emit(job, error_json(f"internal error: {type(error).__name__}: {error}",
                                             query_id=job.request.id), final=True)

    def _search(self, job, level):
        request = job.request
        player = self.player(level)
        player.new_game()                      # a fresh tree for every position, as KataGo's
        state, colour = request.state, request.state.to_move
        started = time.monotonic()
        deadline = math.inf if request.max_seconds is None else started + request.max_seconds
        next_report = math.inf if request.report_every is None else \
            started + request.first_report_after
        done, empty_slices = 0, 0
        while not job.stop and done < request.max_visits and empty_slices < 2:
            if level + 1 < PREEMPTION_LEVELS:
                urgent = self.server.queue.take_above(request.priority)
                if urgent is not None:
                    self.parked.append(job)
                    paused = time.monotonic()
                    self.serve(urgent, level + 1)
                    self.parked.pop()
                    paused = time.monotonic() - paused    # the clock stops while parked
                    deadline += paused
                    next_report += paused
                    continue
            self._answer_terminated_parked()
            now = time.monotonic()
            if now >= deadline:
                break
            seconds = max(MIN_SLICE_SECONDS, min(SLICE_SECONDS, deadline - now, next_report - now))
            analysis = player.search(state, colour, max_playouts=request.max_visits - done,
                                     max_seconds=seconds, restriction=request.restriction)
            done += analysis.simulations
            empty_slices = empty_slices + 1 if analysis.simulations == 0 else 0
            if analysis.total_visits > 0:
                job.analysis = analysis
            if time.monotonic() >= next_report and job.analysis is not None and \
                    done < request.max_visits and not job.stop:
                self.server.emit(job, self._message(job, during_search=True), final=False)
                next_report = time.monotonic() + request.report_every

    def _answer_terminated_parked(self):
        for job in self.parked:
            if job.stop and not job.finished:
                self._finish(job)

    def _finish(self, job):
        if job.finished:
            return
        message = no_results(job.request) if job.analysis is None else \
            self._message(job, during_search=False)
        self.server.emit(job, message, final=True)

    def _message(self, job, during_search):
        request = job.request
        probabilities = self._probabilities(job)
        policy = None
        if request.include_policy and probabilities is not None:
            policy = policy_list(probabilities, request.state)
        move_prior = None if probabilities is None else \
            (lambda move: float(probabilities[-1 if move == PASS else move]))
        move_ownership = None
        if request.include_moves_ownership and self.has_move_ownership(request.state.size):
            move_ownership = lambda move: self._move_ownership(job, move)   # noqa: E731
        return answer(request, job.analysis, during_search, policy, move_prior, move_ownership)

    def _probabilities(self, job):
        if self.predictor is None:
            return None
        if job.probabilities is None:
            state = job.request.state
            job.probabilities = np.asarray(self.predictor.probabilities(state, state.to_move))
        return job.probabilities

    def _move_ownership(self, job, move):
        """The value net's ownership (+1 Black) after the move, computed once per job."""
        if move not in job.move_ownership:
            evaluator = self.player(job.level).evaluator
            work = job.request.state.copy()
            work.play(move, work.to_move, tolerant=True)
            job.move_ownership[move] = np.asarray(evaluator.evaluate(work).ownership)
        return job.move_ownership[move]
