"""What a newcomer waits for: the README's two commands on a fresh clone, in a fresh virtual
environment with an empty pip cache (nothing downloaded before), timed as a user sees them.

    python benchmarks/newcomer_wait.py [--runs 3] [--ref HEAD] [--work /tmp/newcomer]

For each run: `git clone` of the checkout at --ref, `python -m venv`, then
- setup: the README's set-up command's install (`pip install -e .`) until the engine answers
  `protocol_version` on stdin (the command's second half);
- test install: the README's test command's install (`pip install -e '.[test]'`) right after it;
- collection: `python -m pytest --collect-only -q`, what pytest does before its first test.
The last two together are the wait before the first test. Prints one line a run and the medians;
--json writes them. Run it with nothing else on the machine: it times compilers and downloads.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
STEPS = ("setup", "test_install", "collection")


def readme_commands():
    """(set-up install, test install) as the README gives them (the part before `&&`)."""
    sys.path.insert(0, str(REPO))
    from tests.test_readme_commands import readme_command
    return (readme_command("Set up and run").split("&&")[0].strip(),
            readme_command("Run the tests").split("&&")[0].strip())


def timed(command, cwd, env, stdin=None):
    start = time.monotonic()
    result = subprocess.run(command, shell=True, cwd=cwd, env=env, input=stdin,
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"`{command}` failed ({result.returncode}):\n{result.stdout[-2000:]}"
                         f"{result.stderr[-2000:]}")
    return time.monotonic() - start, result.stdout


def one_run(ref, work):
    setup_install, test_install = readme_commands()
    if work.exists():
        shutil.rmtree(work)
    checkout, venv, cache = work / "kosumi", work / "venv", work / "pip-cache"
    subprocess.run(["git", "clone", "-q", str(REPO), str(checkout)], check=True)
    subprocess.run(["git", "-C", str(checkout), "checkout", "-q", ref], check=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    env = dict(os.environ, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", PIP_CACHE_DIR=str(cache),
               VIRTUAL_ENV=str(venv))
    env.pop("PYTHONPATH", None)
    install, _ = timed(setup_install, checkout, env)
    answer, reply = timed("python gtp_server.py", checkout, env, stdin="protocol_version\nquit\n")
    if not reply.startswith("= 2"):
        raise SystemExit(f"the engine answered {reply!r}")
    tests, _ = timed(test_install, checkout, env)
    collection, listing = timed("python -m pytest --collect-only -q", checkout, env)
    return {"setup": install + answer, "test_install": tests, "collection": collection,
            "collected": listing.strip().splitlines()[-1]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ref", default="HEAD", help="the commit to clone (default HEAD)")
    parser.add_argument("--work", default=None, help="scratch directory (default: a temporary one)")
    parser.add_argument("--json", help="also write the runs and medians here")
    args = parser.parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory(prefix="kosumi-newcomer-") as scratch:
        work = Path(args.work or scratch)
        for number in range(1, args.runs + 1):
            run = one_run(args.ref, work)
            runs.append(run)
            print(f"run {number}: setup until the engine answers {run['setup']:.1f} s; test install "
                  f"{run['test_install']:.1f} s + collection {run['collection']:.1f} s = "
                  f"{run['test_install'] + run['collection']:.1f} s before the first test "
                  f"({run['collected']})", flush=True)
    medians = {step: statistics.median(run[step] for run in runs) for step in STEPS}
    print(f"medians: setup {medians['setup']:.1f} s; before the first test "
          f"{medians['test_install'] + medians['collection']:.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps({"ref": args.ref, "runs": runs, "medians": medians},
                                              indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
