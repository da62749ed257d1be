"""A small GTP client: talk to a Go engine running as a subprocess.

Reading order: `GtpClient.send()` is the whole protocol (write one command line, read the reply
up to its first empty line); the exceptions below say how a command can fail. The match tool
(engine/tools/match.py), the trainer's evaluation matches and the benchmarks all go through it.

Failure model. A `?` reply is the engine's answer and leaves the engine usable
(`GtpCommandError`). Everything else, a crash, a hang past the timeout, or bytes that are not a
GTP reply, means the engine can no longer be trusted to be in step with us: the client kills it
and every later `send()` raises at once. The caller starts a new client if it wants to go on.

The engine runs in its own session (process group) so that a command line that starts a shell
or a wrapper script is killed whole, and so that a Ctrl-C in our terminal does not reach the
engine before we have shut it down ourselves. POSIX only (it uses select on the pipe).
"""
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import time

GNUGO_FALLBACK_PATH = "/usr/games/gnugo"  # Debian's gnugo package installs here, off root's PATH
QUIT_TIMEOUT = 2.0  # seconds a well-behaved engine gets to answer `quit` and exit
EXIT_STATUS_WAIT = 0.5  # after EOF on stdout, how long to wait for the exit status to appear


class GtpError(Exception):
    """Base class of everything this module raises about an engine."""


class GtpCommandError(GtpError):
    """The engine answered `? message`; it is still running and in step."""

    def __init__(self, command, message):
        super().__init__(f"{command!r} failed: {message}")
        self.command = command
        self.message = message

    def __reduce__(self):
        # rebuilt from its own arguments, so the message survives the trip from a worker process
        return type(self), (self.command, self.message)


class GtpEngineFailure(GtpError):
    """The engine is gone or out of step; the client has killed it."""


class GtpEngineCrashed(GtpEngineFailure):
    """The engine exited or closed its standard output."""


class GtpTimeout(GtpEngineFailure):
    """The engine did not finish its reply in time."""


class GtpProtocolError(GtpEngineFailure):
    """The engine wrote something that is not a GTP reply."""


def find_gnugo():
    """Path of the GNU Go executable, or None if it is not installed."""
    on_path = shutil.which("gnugo")
    if on_path:
        return on_path
    if os.access(GNUGO_FALLBACK_PATH, os.X_OK):
        return GNUGO_FALLBACK_PATH
    return None


def command_argv(command):
    """A command line (string, shell-quoted, or list) as an argv list.

    A bare `gnugo` that is not on PATH becomes the Debian path, so that the same command line
    works for root (whose PATH lacks /usr/games) and for everyone else.
    """
    argv = shlex.split(command) if isinstance(command, str) else [str(word) for word in command]
    if not argv:
        raise ValueError("empty engine command line")
    if argv[0] == "gnugo" and shutil.which("gnugo") is None:
        gnugo = find_gnugo()
        if gnugo:
            argv[0] = gnugo
    return argv


class GtpClient:
    """One engine subprocess and its GTP conversation.

    `command` is a shell-like string or an argv list; it is run without a shell. `stderr` is where
    the engine's standard error goes (a file object, or subprocess.DEVNULL by default; never a
    pipe nobody reads, which would hang the engine once it filled). `transcript`, if given, is
    called as transcript(direction, text) with direction ">" for each command sent and "<" for
    each reply, for logging. Raises OSError if the program cannot be started.
    """

    def __init__(self, command, *, stderr=subprocess.DEVNULL, cwd=None, env=None, transcript=None):
        self.argv = command_argv(command)
        self.command_line = shlex.join(self.argv)
        self._transcript = transcript
        self._buffer = bytearray()
        self._known_commands = None
        self.failure = None  # the GtpEngineFailure that ended this client, if any
        self._group_killed = False
        try:
            self._process = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                cwd=cwd, env=env, bufsize=0, start_new_session=True)
        except OSError as error:
            raise type(error)(error.errno, f"cannot start engine {self.command_line!r}: "
                                           f"{error.strerror}") from error
        self._stdout_fd = self._process.stdout.fileno()
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._stdout_fd, selectors.EVENT_READ)

    # --- the protocol ---------------------------------------------------------------------------

    def send(self, command, timeout=None):
        """Send one command and return its reply text (without the `= `; lines joined by \\n).

        timeout: seconds for the whole reply, None to wait forever.
        Raises GtpCommandError on a `?` reply, GtpEngineFailure (after killing the engine) on a
        crash, a timeout or a malformed reply, ValueError for a command we refuse to send.
        """
        command = command.strip()
        if not command or "\n" in command or "\r" in command:
            raise ValueError(f"a GTP command is one non-empty line, not {command!r}")
        if self.failure is not None:
            raise type(self.failure)(f"engine {self.command_line!r} is no longer usable: "
                                     f"{self.failure}")
        deadline = None if timeout is None else time.monotonic() + timeout
        self._log(">", command)
        try:
            self._process.stdin.write(command.encode() + b"\n")
            self._process.stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError):
            self._fail(GtpEngineCrashed(f"engine exited before {command!r} could be sent"
                                        f"{self._exit_description()}"))
        try:
            status, text = self._read_reply(command, deadline, timeout)
        except GtpEngineFailure:
            raise
        except BaseException:
            # Interrupted mid-reply (Ctrl-C, say): the rest of the reply would be taken for the
            # answer to the next command, so this engine is out of step for good.
            if self.failure is None:
                self.failure = GtpProtocolError(f"interrupted while waiting for the reply to "
                                                f"{command!r}")
                self.kill()
            raise
        self._log("<", f"{status} {text}".rstrip())
        if status == "?":
            raise GtpCommandError(command, text)
        return text

    def _read_reply(self, command, deadline, timeout):
        # The first line starts with '=' or '?'; the reply ends at the first empty line. Empty
        # lines before a reply are tolerated (the spec lets engines emit them); other text is not.
        first = self._read_line(command, deadline, timeout)
        while first.strip() == "":
            first = self._read_line(command, deadline, timeout)
        if first[0] not in "=?":
            self._fail(GtpProtocolError(f"reply to {command!r} does not start with '=' or '?': "
                                        f"{first[:80]!r}"))
        status = first[0]
        lines = [first[1:].lstrip(" \t")]
        while True:
            line = self._read_line(command, deadline, timeout)
            if line.strip() == "":
                break
            lines.append(line)
        return status, "\n".join(lines).rstrip()

    def _read_line(self, command, deadline, timeout):
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[:newline + 1]
                return line.decode("utf-8", errors="replace").rstrip("\r").replace("\t", " ")
            if deadline is None:
                ready = self._selector.select()
            else:
                remaining = deadline - time.monotonic()
                ready = self._selector.select(remaining) if remaining > 0 else []
                if not ready:
                    self._fail(GtpTimeout(f"no reply to {command!r} within {timeout:g} s"))
            try:
                chunk = os.read(self._stdout_fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                self._fail(GtpEngineCrashed(f"engine closed its output while answering "
                                            f"{command!r}{self._exit_description()}"))
            self._buffer += chunk

    def _fail(self, failure):
        self.failure = failure
        self.kill()
        raise failure

    def _exit_description(self):
        try:
            status = self._process.wait(EXIT_STATUS_WAIT)
        except subprocess.TimeoutExpired:
            return ""
        if status < 0:
            return f" (killed by signal {-status})"
        return f" (exit status {status})"

    def _log(self, direction, text):
        if self._transcript is not None:
            self._transcript(direction, text)

    # --- conveniences ---------------------------------------------------------------------------

    def list_commands(self, timeout=None):
        """The engine's `list_commands`, asked once and cached."""
        if self._known_commands is None:
            self._known_commands = self.send("list_commands", timeout).split()
        return list(self._known_commands)

    def known_command(self, name, timeout=None):
        return name in self.list_commands(timeout)

    # --- process life ---------------------------------------------------------------------------

    @property
    def pid(self):
        return self._process.pid

    @property
    def usable(self):
        """True while the engine is running and in step with us."""
        return self.failure is None and self._process.poll() is None

    @property
    def returncode(self):
        return self._process.poll()

    def kill(self):
        """Kill the engine's whole process group and reap the engine. Idempotent.

        The group is signalled even if the engine itself has already exited, because children it
        started (a wrapper script's engine, say) may still be running in it.
        """
        if not self._group_killed:
            self._group_killed = True
            try:
                os.killpg(self._process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass  # the group is already empty
        self._process.wait()
        self._close_pipes()

    def close(self, timeout=QUIT_TIMEOUT):
        """Ask the engine to `quit`, give it `timeout` seconds to exit, then kill it."""
        if self.usable:
            try:
                self.send("quit", timeout)
                self._process.wait(timeout)
            except (GtpError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def _close_pipes(self):
        if self._selector is not None:
            self._selector.close()
            self._selector = None
        for pipe in (self._process.stdin, self._process.stdout):
            try:
                pipe.close()
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()
