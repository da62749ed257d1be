"""The command lines' options, generated from the settings (engine/play/settings.py) and shared by
`kosumi` (main.py) and `kosumi analysis` (analysis_main.py).

Reading order: `add_settings_options()` makes one option per field of a settings class (its flag,
help, default and range from the field) and `settings_from_options()` reads them back into the
settings object the players are given; `add_net_options()` and `add_logging_options()` are the
options both command lines have that are no player's settings; `start_logging()` and
`load_predictor()` are the steps both take with them.

A flag that two settings classes declare (`--resign-threshold`: the 1-ply player's score
fraction and the search's win rate) is one option: its help joins both fields', and a value
given goes to both, each of which is read only in its own mode.
"""
import argparse
import sys

from engine.play.settings import describe_range, format_value, parse_value, settings_fields

EXIT_BAD_SETUP = 2


class _NotGiven:
    """The default of an option whose fields' defaults differ: each field keeps its own."""

    def __repr__(self):
        return "each mode's default"


NOT_GIVEN = _NotGiven()


def flag_of(settings_field):
    return settings_field.metadata["flag"] or "--" + settings_field.name.replace("_", "-")


def value_type(settings_field):
    """An argparse type: text -> the field's value, or ArgumentTypeError saying its range."""
    def parse(text):
        try:
            return parse_value(settings_field, text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
    return parse


def add_settings_options(parser, settings_classes, only=None, skip=(), groups=None):
    """One option per command-line field of settings_classes (a field named in `only`, when it is
    given, and not in `skip`); groups: class -> the argparse group for its options (default:
    parser)."""
    by_flag = {}
    for settings_class in settings_classes:
        for settings_field in settings_fields(settings_class):
            name = settings_field.name
            if not settings_field.metadata["cli"] or name in skip or \
                    (only is not None and name not in only):
                continue
            by_flag.setdefault(flag_of(settings_field), []).append((settings_class, settings_field))
    for flag, declared in by_flag.items():
        settings_class, first = declared[0]
        target = (groups or {}).get(settings_class, parser)
        meta = first.metadata
        helps = [_help_with_default(settings_field) for _, settings_field in declared]
        if meta["kind"] is bool:
            target.add_argument(flag, dest=first.name, action="store_true", help=helps[0])
            continue
        defaults = {settings_field.default for _, settings_field in declared}
        target.add_argument(flag, dest=first.name, type=value_type(first),
                            default=defaults.pop() if len(defaults) == 1 else NOT_GIVEN,
                            metavar=meta["metavar"] or _choices_metavar(first),
                            help="; ".join(helps))
        if meta["off_flag"]:
            target.add_argument(meta["off_flag"], dest=f"{first.name}_off", action="store_true",
                                help=f"the same as {flag} {meta['none']}")


def _choices_metavar(settings_field):
    choices = settings_field.metadata["choices"]
    return "{" + ",".join(choices) + "}" if choices else None


def _help_with_default(settings_field):
    text = settings_field.metadata["help"].replace("%", "%%")
    if settings_field.metadata["kind"] is bool:
        return text
    default = format_value(settings_field, settings_field.default)
    return f"{text} (default: {default}; {describe_range(settings_field)})"


def settings_from_options(settings_class, args, **fixed):
    """The settings object the parsed options describe: each field's option where the command
    line has one and it was given, else the field's default; fixed: values that override both."""
    values = {}
    for settings_field in settings_fields(settings_class):
        name = settings_field.name
        if name in fixed:
            values[name] = fixed[name]
        elif getattr(args, f"{name}_off", False):
            values[name] = None
        elif hasattr(args, name) and getattr(args, name) is not NOT_GIVEN:
            values[name] = getattr(args, name)
    return settings_class(**values)


def add_net_options(parser, weights_help):
    """--weights, --evaluator, --policy: which nets are loaded."""
    parser.add_argument("--weights", metavar="PATH", help=weights_help)
    parser.add_argument("--evaluator", choices=("net", "uniform"), default="net",
                        help="'uniform' plays from a plain area count without any net: for "
                             "testing controllers and the protocol (default: net)")
    parser.add_argument("--policy", metavar="PATH",
                        help="a move-prediction (policy) net, or a judging net for its move "
                             "head, a weight file kosumi-train policy wrote (default, when "
                             "shipped: weights/policy_19x19.npz for the policy player, "
                             "weights/policy_prior_19x19.npz as the search's prior; 'none': no "
                             "policy net)")


def add_logging_options(parser):
    parser.add_argument("--log-level", default="warning",
                        choices=("debug", "info", "warning", "error"),
                        help="log detail; debug logs every move's reason and every line in and "
                             "out (default: %(default)s)")
    parser.add_argument("--log-file", metavar="PATH",
                        help="write the log there instead of to stderr")


def start_logging(args, program):
    """Logging as the options say; exits with EXIT_BAD_SETUP when the log file cannot be opened."""
    from engine.gtp.protocol import configure_logging
    try:
        configure_logging(args.log_level, args.log_file)
    except OSError as error:
        print(f"{program}: cannot open the log file: {error}", file=sys.stderr)
        sys.exit(EXIT_BAD_SETUP)


def load_predictor(path, symmetries=1, default=None, precision="fp32"):
    """The policy net (a MovePredictor in `precision`, or a judging net's move head: JudgeMoves)
    at path; when path is None, the shipped net default (the search's prior,
    DEFAULT_PRIOR_POLICY_WEIGHTS, unless told) if it is there; None for 'none' or nothing
    shipped. Raises WeightFileError naming a named file that cannot be used."""
    if path == "none":
        return None
    if path is None:
        from engine.nets.weights import DEFAULT_PRIOR_POLICY_WEIGHTS
        path = default or DEFAULT_PRIOR_POLICY_WEIGHTS
        if not path.exists():
            return None
    from engine.nets.weights import architecture_name
    if architecture_name(path) == "judge":              # a judging net's move head
        from engine.nets.evaluator import JudgeEvaluator, JudgeMoves
        return JudgeMoves(JudgeEvaluator.load(path, precision=precision), symmetries)
    from engine.nets.predictor import MovePredictor
    return MovePredictor.load(path, symmetries, precision)
