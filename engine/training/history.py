"""A run's curves in brief (`RunHistory`): what every weight file kosumi-train writes carries of
the run, so that the curves go with the net (engine/training/plots.py draws them)."""

HISTORY_BLOCK = 100                 # games per point of the loss and length curves a weight file
                                    # carries (RunHistory)
HISTORY_EVAL_KEYS = ("game", "opponent", "protocol", "games", "games_played", "wins", "draws",
                     "win_rate", "win_rate_95", "mean_margin")


class RunHistory:
    """A run's curves in brief: the mean loss and game length of every HISTORY_BLOCK games, and
    its evaluation results. Every checkpoint's weight file carries it (trainer metadata,
    "history"), so the curves go with the net: a run started from that file (--from-weights, on
    another machine when the run directory is gone) begins with them, and `kosumi-train plot`
    draws them from a run directory or from the weight file itself."""

    def __init__(self):
        self.blocks = {}      # first game of a block -> [games, loss sum, games with a loss,
                              # length sum]
        self.evals = []

    def add_game(self, line):
        first = (line["game"] - 1) // HISTORY_BLOCK * HISTORY_BLOCK + 1
        block = self.blocks.setdefault(first, [0, 0.0, 0, 0.0])
        block[0] += 1
        if line["loss"] is not None:
            block[1] += line["loss"]
            block[2] += 1
        block[3] += line["length"]

    def add_eval(self, line):
        self.evals.append(_history_eval(line))

    @classmethod
    def from_log(cls, records):
        """The history in a run's log records: its games and evaluations, and in its start
        record the history of the net the run started from."""
        history = cls()
        for record in records:
            if record.get("type") == "game":
                history.add_game(record)
            elif record.get("type") == "eval":
                history.add_eval(record)
            elif record.get("type") == "start" and "history" in record:
                history.merge(record["history"])
        return history

    def merge(self, data):
        """Add a history in to_json's form; ValueError when it is not one."""
        try:
            if data["block"] != HISTORY_BLOCK:
                raise ValueError(f"blocks of {data['block']} games, not {HISTORY_BLOCK}")
            for first, games, mean_loss, loss_games, mean_length in data["blocks"]:
                block = self.blocks.setdefault(int(first), [0, 0.0, 0, 0.0])
                block[0] += int(games)
                block[1] += 0.0 if mean_loss is None else float(mean_loss) * int(loss_games)
                block[2] += int(loss_games)
                block[3] += float(mean_length) * int(games)
            for line in data["evals"]:
                self.add_eval(line)
        except (KeyError, TypeError, ValueError) as error:
            raise ValueError(f"its training history is malformed ({error!r})") from None

    def to_json(self, extra_evals=()):
        """The compact form kept in weight files, with extra_evals (those of evals.jsonl)."""
        blocks = [[first, games, round(loss / loss_games, 6) if loss_games else None, loss_games,
                   round(length / games, 2)]
                  for first, (games, loss, loss_games, length) in sorted(self.blocks.items())]
        evals = self.evals + [_history_eval(line) for line in extra_evals]
        return {"block": HISTORY_BLOCK, "blocks": blocks,
                "evals": sorted(evals, key=lambda line: line["game"])}


def _history_eval(line):
    return {key: line[key] for key in HISTORY_EVAL_KEYS if key in line}

